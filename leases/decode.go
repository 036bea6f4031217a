package leases

import (
	"encoding/json"
	"strconv"
	"strings"
)

// parseInt parses an integer column; empty text is (0, true).
func parseInt(raw string) (int64, bool) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != float64(int64(f)) {
			return 0, false
		}
		return int64(f), true
	}
	return n, true
}

// encodeList renders an action list as a JSON array ("[]" for none).
func encodeList(v []string) string {
	if v == nil {
		v = []string{}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// encodeObject renders a JSON object column ("" for nil, also a nil map inside v).
func encodeObject(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return ""
	}
	return string(b)
}
