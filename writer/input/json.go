package input

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner walks one JSON text (a JSONL line, or a CSV cell holding a nested
// value) byte by byte, so that values go straight into Arrow builders
// without an intermediate tree. It validates the grammar of RFC 8259 as it
// goes; every error is a *syntaxError carrying the byte offset.
type scanner struct {
	b       []byte
	i       int
	scratch []byte // unescaped string text, reused
}

// syntaxError is malformed JSON at byte Off (0-based) of the text;
// Truncated when the text ends before the value does.
type syntaxError struct {
	Off       int
	Msg       string
	Truncated bool
}

func (e *syntaxError) Error() string { return e.of("the text") }

// of describes the error in what, the text that holds it: "the line is
// truncated JSON: unexpected end of input in a number (byte 19)".
func (e *syntaxError) of(what string) string {
	if e.Truncated {
		return fmt.Sprintf("%s is truncated JSON: %s (byte %d)", what, e.Msg, e.Off+1)
	}
	return fmt.Sprintf("%s is not valid JSON: %s (byte %d)", what, e.Msg, e.Off+1)
}

// maxNesting bounds the depth of objects and arrays that skip descends
// into, so that no input can exhaust the stack.
const maxNesting = 1000

func (s *scanner) reset(b []byte) { s.b, s.i = b, 0 }

// ws skips white space.
func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// blank reports whether only white space is left.
func (s *scanner) blank() bool {
	s.ws()
	return s.i >= len(s.b)
}

// peek returns the next byte after white space, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *scanner) errf(format string, a ...any) error {
	return &syntaxError{Off: s.i, Msg: fmt.Sprintf(format, a...)}
}

// unexpected describes the byte at the cursor in an error.
func (s *scanner) unexpected(context string) error {
	if s.i >= len(s.b) {
		return &syntaxError{Off: s.i, Msg: "unexpected end of input " + context, Truncated: true}
	}
	return s.errf("invalid character %s %s", quoteByte(s.b[s.i]), context)
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("0x%02x", c)
}

// expect consumes c (after white space) or fails.
func (s *scanner) expect(c byte, context string) error {
	if s.peek() != c {
		return s.unexpected(context)
	}
	s.i++
	return nil
}

// end checks that nothing but white space follows.
func (s *scanner) end() error {
	s.ws()
	if s.i < len(s.b) {
		return s.unexpected("after the end of the value")
	}
	return nil
}

// literal consumes the keyword word (true, false or null).
func (s *scanner) literal(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.unexpected("in a literal (want " + word + ")")
	}
	s.i += len(word)
	return nil
}

// str reads a string at the cursor (which is at '"') and returns its
// unescaped bytes: a slice of the input when there are no escapes, else of
// the scanner's scratch buffer. Either is valid only until the next call.
// Invalid UTF-8 is an error; lone surrogate escapes become U+FFFD, as
// encoding/json decodes them.
func (s *scanner) str() ([]byte, error) {
	start := s.i
	s.i++ // opening quote
	plain := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[start+1 : s.i]
			s.i++
			if plain {
				if !utf8.Valid(raw) {
					return nil, &syntaxError{Off: start, Msg: "string is not valid UTF-8"}
				}
				return raw, nil
			}
			return s.unescape(start, raw)
		case c == '\\':
			plain = false
			s.i += 2
		case c < 0x20:
			return nil, s.errf("control character %s in a string", quoteByte(c))
		default:
			s.i++
		}
	}
	return nil, &syntaxError{Off: start, Msg: "unterminated string", Truncated: true}
}

// unescape decodes the escapes of raw, the text between the quotes of the
// string starting at byte start.
func (s *scanner) unescape(start int, raw []byte) ([]byte, error) {
	out := s.scratch[:0]
	bad := func(j int, msg string) error { return &syntaxError{Off: start + 1 + j, Msg: msg} }
	for j := 0; j < len(raw); {
		c := raw[j]
		if c != '\\' {
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(raw) {
			return nil, bad(j, "bad escape at the end of a string")
		}
		switch e := raw[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw, j+2)
			if !ok {
				return nil, bad(j, `bad \u escape`)
			}
			j += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(raw, j+2); ok && j+1 < len(raw) && raw[j] == '\\' && raw[j+1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						j += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return nil, bad(j, fmt.Sprintf("bad escape %s in a string", quoteByte(e)))
		}
		j += 2
	}
	s.scratch = out
	if !utf8.Valid(out) {
		return nil, &syntaxError{Off: start, Msg: "string is not valid UTF-8"}
	}
	return out, nil
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// number reads a number at the cursor and returns its text. integral
// reports that it has neither a fraction nor an exponent.
func (s *scanner) number() (text []byte, integral bool, err error) {
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		s.digits()
	default:
		return nil, false, s.unexpected("in a number")
	}
	integral = true
	if s.i < len(s.b) && s.b[s.i] == '.' {
		integral = false
		s.i++
		if s.digits() == 0 {
			return nil, false, s.unexpected("after a decimal point")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		integral = false
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil, false, s.unexpected("in an exponent")
		}
	}
	return s.b[start:s.i], integral, nil
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// skip reads and discards one value, checking its grammar.
func (s *scanner) skip(depth int) error {
	if depth > maxNesting {
		return s.errf("nested deeper than %d levels", maxNesting)
	}
	switch s.peek() {
	case '{':
		s.i++
		if s.peek() == '}' {
			s.i++
			return nil
		}
		for {
			if s.peek() != '"' {
				return s.unexpected("where an object key should be")
			}
			if _, err := s.str(); err != nil {
				return err
			}
			if err := s.expect(':', "after an object key"); err != nil {
				return err
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			more, err := s.next('}', "object")
			if err != nil || !more {
				return err
			}
		}
	case '[':
		s.i++
		if s.peek() == ']' {
			s.i++
			return nil
		}
		for {
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			more, err := s.next(']', "array")
			if err != nil || !more {
				return err
			}
		}
	case '"':
		_, err := s.str()
		return err
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		_, _, err := s.number()
		return err
	}
}

// next is called after an element of an object or array: it consumes ','
// (more elements follow) or the closing byte.
func (s *scanner) next(closing byte, what string) (more bool, err error) {
	switch s.peek() {
	case ',':
		s.i++
		return true, nil
	case closing:
		s.i++
		return false, nil
	}
	return false, s.unexpected("after an " + what + " element")
}

// kind names the JSON value starting with c, for type errors.
func kind(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
