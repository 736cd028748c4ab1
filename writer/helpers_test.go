package writer_test

import ()
