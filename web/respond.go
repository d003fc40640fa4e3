package web

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/leakscope/leakscope/analysis/flame"
	"github.com/leakscope/leakscope/ingest/bundle"
)

// apiError is the JSON body of every error answer.
type apiError struct {
	Error string `json:"error"`
}

// writeJSON answers v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "encode answer: "+err.Error())
		return
	}
	writeBody(w, status, body)
}

// writeBody answers an already encoded JSON body.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(body)
}

// writeError answers {"error": msg}.
func writeError(w http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(apiError{Error: msg})
	writeBody(w, status, body)
}

// encodeError returns the body and status of an error answer.
func encodeError(status int, msg string) ([]byte, int) {
	body, _ := json.Marshal(apiError{Error: msg})
	return body, status
}

// statusOf maps an error to an HTTP status.
func statusOf(err error) int {
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrNoSuspect), errors.Is(err, flame.ErrNoSnapshot), errors.Is(err, flame.ErrNoFunction):
		return http.StatusNotFound
	case errors.As(err, &mbe), errors.Is(err, bundle.ErrTooLarge), errors.Is(err, ErrQuota):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, bundle.ErrArchive), errors.Is(err, errBadRequest):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// errBadRequest marks errors in a request's parameters.
var errBadRequest = errors.New("bad request")
