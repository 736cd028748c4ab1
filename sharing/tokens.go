package sharing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// errToken is the one answer to a token that does not open: the message
// says nothing of why.
var errToken = errors.New("sharing: token does not verify")

// maxTokenBytes bounds a page or refresh token read from a request.
const maxTokenBytes = 4096

// mac is the HMAC-SHA256 of purpose and msg under the server's key.
func (s *Server) mac(purpose string, msg []byte) []byte {
	m := hmac.New(sha256.New, s.signKey)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write(msg)
	return m.Sum(nil)
}

// sealToken encodes v as a token the server alone can make: the JSON of v
// and its MAC for purpose, base64url.
func (s *Server) sealToken(purpose string, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // token types always marshal
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(b) + "." + enc.EncodeToString(s.mac(purpose, b))
}

// openToken decodes a token sealToken made for purpose into v; a token
// that is malformed, forged or made for another purpose fails with
// errToken.
func (s *Server) openToken(purpose, tok string, v any) error {
	if len(tok) > maxTokenBytes {
		return errToken
	}
	body, sig, ok := strings.Cut(tok, ".")
	if !ok {
		return errToken
	}
	enc := base64.RawURLEncoding
	b, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(purpose, b)) {
		return errToken
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if dec.Decode(v) != nil {
		return errToken
	}
	return nil
}
