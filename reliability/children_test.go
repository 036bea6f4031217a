package reliability_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childEnv selects a child process's part; the rest of its input is in CHILD_* variables.
const childEnv = "RELIABILITY_CHILD"

// runChild is the body of a child process; it returns the exit code.
func runChild(mode string) int {
	var err error
	switch mode {
	case "hold-db":
		err = holdDB(os.Getenv("CHILD_DB"))
	case "supervisor":
		err = supervise(os.Getenv("CHILD_WS"), os.Getenv("CHILD_AUDIT"), os.Getenv("CHILD_FOR"))
	default:
		err = fmt.Errorf("unknown child mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	return 0
}

// holdDB is another writer: it takes the DB's write lock with BEGIN EXCLUSIVE, writes,
// says "held", keeps the transaction open until a line arrives on stdin (or stdin ends: the
// test that started it is gone), then commits and says "released".
func holdDB(path string) error {
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "UPDATE leases SET heartbeat_count = heartbeat_count + 100"); err != nil {
		return err
	}
	fmt.Println("held")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	fmt.Println("released")
	return nil
}

// childIn starts the test binary as a child process in mode, with stdin (nil: none); its
// stdout is returned as a line reader and it is killed when the test ends.
func childIn(t *testing.T, stdin io.Reader, mode string, env ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+mode), env...)
	cmd.Stderr = os.Stderr
	cmd.Stdin = stdin
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, bufio.NewReader(out)
}

// expectLine reads the child's next line and fails unless it is want.
func expectLine(t *testing.T, r *bufio.Reader, want string) {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil && err != io.EOF || strings.TrimSpace(line) != want {
		t.Fatalf("child said %q (%v), want %q", line, err, want)
	}
}
