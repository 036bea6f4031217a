package fakegitea_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"steward/gitea/fakegitea"
)

func get(t *testing.T, url, token string) (*http.Response, []map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "token "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp, out
}

func TestPaginationHeadersAndAuth(t *testing.T) {
	t.Parallel()
	f := fakegitea.New()
	srv := httptest.NewServer(f)
	defer srv.Close()
	f.SetBaseURL(srv.URL)
	f.AddUser("u", "tok")
	r := f.CreateRepo("o", "r")
	for i := range 12 {
		r.CreateIssue("u", fmt.Sprintf("i%d", i), "", "x")
	}
	base := srv.URL + "/api/v1/repos/o/r/issues?labels=x&limit=5"
	resp, items := get(t, base+"&page=2", "tok")
	if resp.StatusCode != 200 || len(items) != 5 || resp.Header.Get("X-Total-Count") != "12" {
		t.Fatalf("page 2: %d, %d items, total %q", resp.StatusCode, len(items), resp.Header.Get("X-Total-Count"))
	}
	link := resp.Header.Get("Link")
	for _, rel := range []string{`page=3>; rel="next"`, `page=3>; rel="last"`, `page=1>; rel="first"`, `page=1>; rel="prev"`} {
		if !strings.Contains(link, rel) {
			t.Errorf("Link %q lacks %s", link, rel)
		}
	}
	if _, items = get(t, base+"&page=3", "tok"); len(items) != 2 {
		t.Errorf("page 3: %d items, want 2", len(items))
	}
	// Gitea drops unknown label names from the filter: everything open is listed.
	if resp, _ := get(t, srv.URL+"/api/v1/repos/o/r/issues?labels=nope&limit=50", "tok"); resp.Header.Get("X-Total-Count") != "12" {
		t.Errorf("unknown label filter: total %q, want 12", resp.Header.Get("X-Total-Count"))
	}
	if resp, _ := get(t, base, "wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", resp.StatusCode)
	}
	if resp, _ := get(t, srv.URL+"/api/v1/version", ""); resp.StatusCode != 200 {
		t.Errorf("version without token: %d", resp.StatusCode)
	}
}

func TestConcurrentSeedingAndReads(t *testing.T) {
	t.Parallel()
	f := fakegitea.New()
	srv := httptest.NewServer(f)
	defer srv.Close()
	f.AddUser("u", "tok")
	r := f.CreateRepo("o", "r")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			n := r.CreateIssue("u", "t", "")
			r.AddComment("u", n, "c")
			r.AddLabel("u", n, "l")
			if i%2 == 0 {
				r.CloseIssue(n)
			}
		}()
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/repos/o/r/issues?state=all", nil)
			req.Header.Set("Authorization", "token tok")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	if _, items := get(t, srv.URL+"/api/v1/repos/o/r/issues?state=all&limit=50", "tok"); len(items) != 8 {
		t.Fatalf("%d items, want 8", len(items))
	}
}
