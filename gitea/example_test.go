package gitea_test

import (
	"fmt"

	"steward/gitea"
)

func ExampleAnswerMarker() {
	marker := gitea.AnswerMarker("att-7")
	fmt.Println(gitea.WithMarker("Target API v2.", marker))
	// Output:
	// Target API v2.
	//
	// <!-- steward:answer id=att-7 -->
}

func ExampleClassify() {
	err := &gitea.HTTPError{Op: "create comment on #3", Status: 403, Message: "forbidden"}
	fmt.Println(gitea.Classify(err), gitea.Classify(&gitea.HTTPError{Status: 502}), gitea.Classify(nil) == gitea.OutcomeNone)
	// Output: refused unknown true
}
