// Package contract is the one behaviour suite for steward's Gitea client, run against a real
// Gitea (gitea/giteatest) and the in-process fake (gitea/fakegitea). Whatever the fake does
// that a real server would not makes the suite fail on one side, which keeps the fake honest.
//
// runContract holds the assertions; Backend and Seeder abstract how a fresh repository is made
// and seeded (through the real API for Gitea, through seeding helpers for the fake).
package contract
