package tui

import (
	"strings"
	"unicode"
)

// fuzzyAll reports whether every term is a subsequence of hay.
func fuzzyAll(hay string, terms []string) bool {
	for _, term := range terms {
		if !fuzzy(hay, term) {
			return false
		}
	}
	return true
}

// fuzzy reports whether term occurs in hay, or — for a term with a letter in it — whether
// its letters occur in order within one word of hay ("pastexp" finds past-expiry). Numbers
// match only as written, so "201" never finds a timestamp.
func fuzzy(hay, term string) bool {
	if strings.Contains(hay, term) {
		return true
	}
	if strings.IndexFunc(term, unicode.IsLetter) < 0 {
		return false
	}
	for _, word := range strings.Fields(hay) {
		j := 0
		for i := 0; i < len(word) && j < len(term); i++ {
			if word[i] == term[j] {
				j++
			}
		}
		if j == len(term) {
			return true
		}
	}
	return false
}
