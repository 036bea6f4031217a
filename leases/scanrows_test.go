package leases

import (
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestScanRowsKeepsEveryRowInOrder: the rows gathered in chunks come back all, in the
// order read, with the problem count, whatever their number — none, within the first
// chunk, at and across the chunk boundaries, and many chunks — and a read of no rows is nil,
// holding no buffer.
func TestScanRowsKeepsEveryRowInOrder(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, n := range []int{0, 1, 63, 64, 65, 192, 193, 1000, 5000, 20000} {
		rows, err := db.Query(`WITH RECURSIVE c(x) AS (SELECT 1 WHERE ?1 > 0 UNION ALL SELECT x+1 FROM c WHERE x < ?1) SELECT x FROM c`, n)
		if err != nil {
			t.Fatal(err)
		}
		h := okHealth()
		got, err := scanRows(rows, []string{"x"}, "numbers", &h, func(g getter) int {
			s, _ := g("x")
			v, _ := strconv.Atoi(s)
			return v
		}, func(v int) []string {
			if v%1000 == 0 {
				return []string{"a round number"}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n || n == 0 && got != nil {
			t.Fatalf("%d rows: got %d (nil: %v); an empty read holds no buffer", n, len(got), got == nil)
		}
		for i, v := range got {
			if v != i+1 {
				t.Fatalf("%d rows: row %d is %d", n, i, v)
			}
		}
		// The note counts the rows with problems: "1 numbers row", "5 numbers rows".
		noun := "numbers rows"
		if n/1000 == 1 {
			noun = "numbers row"
		}
		if want := n / 1000; want > 0 && (len(h.Notes) != 1 || !strings.HasPrefix(h.Notes[0], fmt.Sprintf("%d %s ", want, noun))) {
			t.Errorf("%d rows: notes %v, want one about %d %s with problems", n, h.Notes, want, noun)
		} else if want == 0 && len(h.Notes) != 0 {
			t.Errorf("%d rows: notes %v, want none", n, h.Notes)
		}
	}
}
