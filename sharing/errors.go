package sharing

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// The protocol's error codes (the reference server's), in the errorCode
// field of every error body.
const (
	CodeMalformedRequest      = "MALFORMED_REQUEST"
	CodeInvalidParameterValue = "INVALID_PARAMETER_VALUE"
	CodeResourceDoesNotExist  = "RESOURCE_DOES_NOT_EXIST"
	CodeUnsupportedOperation  = "UNSUPPORTED_OPERATION"
	CodeInternalError         = "INTERNAL_ERROR"
	CodeUnauthenticated       = "UNAUTHENTICATED"
	CodePermissionDenied      = "PERMISSION_DENIED"
	CodeResourceExhausted     = "RESOURCE_EXHAUSTED"
	CodeRequestTooLarge       = "REQUEST_TOO_LARGE"
)

// ErrRequest is wrapped by every *RequestError.
var ErrRequest = errors.New("sharing: request refused")

// RequestError is a refused request: the HTTP status, the protocol's error
// code and the message sent to the client. Messages name only what the
// client sent or may see.
type RequestError struct {
	Status  int
	Code    string
	Message string
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("sharing: %d %s: %s", e.Status, e.Code, e.Message)
}

func (e *RequestError) Unwrap() error { return ErrRequest }

func badRequest(format string, args ...any) *RequestError {
	return &RequestError{http.StatusBadRequest, CodeInvalidParameterValue, fmt.Sprintf(format, args...)}
}

func malformed(format string, args ...any) *RequestError {
	return &RequestError{http.StatusBadRequest, CodeMalformedRequest, fmt.Sprintf(format, args...)}
}

func unsupported(format string, args ...any) *RequestError {
	return &RequestError{http.StatusBadRequest, CodeUnsupportedOperation, fmt.Sprintf(format, args...)}
}

func forbidden(format string, args ...any) *RequestError {
	return &RequestError{http.StatusForbidden, CodePermissionDenied, fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *RequestError {
	return &RequestError{http.StatusNotFound, CodeResourceDoesNotExist, fmt.Sprintf(format, args...)}
}

// errorBody is the protocol's error response.
type errorBody struct {
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
}

// writeError answers with err: a *RequestError as it says, anything else
// as a 500 whose message says nothing of the cause (the access log has
// it).
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var re *RequestError
	if !errors.As(err, &re) {
		re = &RequestError{http.StatusInternalServerError, CodeInternalError, "the server failed to answer; the operator's log has the cause"}
	}
	if info := requestInfoOf(r); info != nil {
		info.err = err
	}
	if re.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="delta-sharing"`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(re.Status)
	if r.Method == http.MethodHead {
		return
	}
	b, _ := json.Marshal(errorBody{ErrorCode: re.Code, Message: re.Message})
	w.Write(append(b, '\n'))
}
