package leases

import (
	"context"

	"steward/leases/leaserec"
)

type attemptCtxKey struct{}

// WithAttempt returns ctx carrying a governed attempt id. Every event a Store writes under
// it names the attempt in its detail (DetailAttempt), so the attempt's effect can be found
// again in the DB when its outcome was lost (steward audit verify).
func WithAttempt(ctx context.Context, attempt string) context.Context {
	if attempt == "" {
		return ctx
	}
	return context.WithValue(ctx, attemptCtxKey{}, attempt)
}

// AttemptOf returns the attempt id WithAttempt put into ctx ("" when none).
func AttemptOf(ctx context.Context) string {
	s, _ := ctx.Value(attemptCtxKey{}).(string)
	return s
}

// markDetail adds the attempt of ctx to an event's detail map.
func markDetail(ctx context.Context, detail any) any {
	a := AttemptOf(ctx)
	if a == "" {
		return detail
	}
	switch d := detail.(type) {
	case map[string]any:
		if d == nil {
			d = map[string]any{}
		}
		d[leaserec.DetailAttempt] = a
		return d
	case nil:
		return map[string]any{leaserec.DetailAttempt: a}
	}
	return detail
}
