package reader

// PageColumns turns the page-by-page decoding of flat columns on or off
// until restore is called, and reports how many columns it has decoded.
func PageColumns(on bool) (used func() int64, restore func()) {
	disablePageColumns = !on
	return pageColumnsUsed.Load, func() { disablePageColumns = false }
}

// PageIndex turns page-index skipping on or off until restore is called.
func PageIndex(on bool) (restore func()) {
	disablePageIndex = !on
	return func() { disablePageIndex = false }
}
