package gitea

import (
	"context"
	"fmt"
	"strconv"

	sdk "code.gitea.io/sdk/gitea"
)

// maxPages bounds every listing so a misbehaving server cannot keep us paging forever.
const maxPages = 1000

// listAll fetches pages until a short page. It returns what was read, the number of pages read
// and the first error; items read before the error are kept.
func listAll[T any](ctx context.Context, c *Client, op string,
	fetch func(s *sdk.Client, lo sdk.ListOptions) ([]T, *sdk.Response, error)) ([]T, int, error) {
	var all []T
	for page := 1; page <= maxPages; page++ {
		var got []T
		total := -1
		err := c.call(ctx, fmt.Sprintf("%s (page %d)", op, page), func(s *sdk.Client) (*sdk.Response, error) {
			var resp *sdk.Response
			var err error
			got, resp, err = fetch(s, sdk.ListOptions{Page: page, PageSize: c.cfg.PageSize})
			if resp != nil && resp.Response != nil {
				if n, perr := strconv.Atoi(resp.Header.Get("X-Total-Count")); perr == nil {
					total = n
				}
			}
			return resp, err
		})
		if err != nil {
			return all, page - 1, err
		}
		all = append(all, got...)
		// A short page ends the listing; so does reaching X-Total-Count, which also protects
		// against an endpoint that ignores page/limit and returns everything every time.
		if len(got) < c.cfg.PageSize || (total >= 0 && len(all) >= total) {
			return all, page, nil
		}
	}
	return all, maxPages, fmt.Errorf("gitea: %s: more than %d pages", op, maxPages)
}

// readHealth turns a listing's outcome into a Health.
func (c *Client) readHealth(what string, pages int, err error) Health {
	switch {
	case err == nil:
		return c.healthOK()
	case pages == 0:
		return c.healthFail(HealthUnavailable, what, err)
	default:
		return c.healthFail(HealthPartial, fmt.Sprintf("%s (after %d pages read)", what, pages), err)
	}
}
