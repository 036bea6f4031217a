// Package realgitea_test runs the governed core's Gitea actions against a real Gitea server
// (built once and cached, see gitea/giteatest), through a loopback proxy that can lose a
// response after the server acted on the request.
package realgitea_test
