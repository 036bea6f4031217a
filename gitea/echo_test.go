package gitea_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// echoServer answers every API request with an error quoting the Authorization header.
type echoServer struct{ hits atomic.Int64 }

func (e *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.hits.Add(1)
	code := http.StatusInternalServerError
	if r.Method == http.MethodGet {
		code = http.StatusUnauthorized
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": "bad credentials: " + r.Header.Get("Authorization")})
}

func newEchoServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
