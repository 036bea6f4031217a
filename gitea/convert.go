package gitea

import (
	sdk "code.gitea.io/sdk/gitea"

	"steward/gitea/gitearec"
)

// The SDK's issues, comments and pull requests as steward's records (package gitearec).

func fromSDKIssue(i *sdk.Issue) gitearec.Issue {
	out := gitearec.Issue{Number: i.Index, Kind: gitearec.KindIssue, Title: i.Title, Body: i.Body, URL: i.HTMLURL,
		State: string(i.State), CreatedAt: i.Created, UpdatedAt: i.Updated, ClosedAt: i.Closed}
	if i.PullRequest != nil {
		out.Kind = gitearec.KindPR
	}
	if i.Poster != nil {
		out.Author = i.Poster.UserName
	}
	for _, l := range i.Labels {
		if l != nil {
			out.Labels = append(out.Labels, l.Name)
		}
	}
	return out
}

func fromSDKComment(c *sdk.Comment) gitearec.Comment {
	out := gitearec.Comment{ID: c.ID, Body: c.Body, URL: c.HTMLURL, CreatedAt: c.Created, UpdatedAt: c.Updated}
	if c.Poster != nil {
		out.Author = c.Poster.UserName
	}
	return out
}

func fromSDKPull(p *sdk.PullRequest) gitearec.PullRequest {
	out := gitearec.PullRequest{Number: p.Index, Title: p.Title, URL: p.HTMLURL, State: string(p.State),
		Merged: p.HasMerged, MergedAt: p.Merged}
	if p.Updated != nil {
		out.UpdatedAt = *p.Updated
	}
	if p.Head != nil {
		out.HeadSHA, out.HeadBranch = p.Head.Sha, p.Head.Ref
	}
	if p.Base != nil {
		out.Base = p.Base.Ref
	}
	return out
}
