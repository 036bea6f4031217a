package gitea_test

import (
	"fmt"

	"steward/gitea"
	"steward/gitea/gitearec"
)

func ExampleAnswerMarker() {
	marker := gitearec.AnswerMarker("att-7")
	fmt.Println(gitearec.WithMarker("Target API v2.", marker))
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
