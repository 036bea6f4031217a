package sim

import (
	"fmt"
	"os/exec"
	"sync"
)

// Proc is a worker's process: its pid is recorded in the claim, and killing it is how a
// worker dies.
type Proc interface {
	PID() int
	// Kill ends the process and reaps it; calling it twice is harmless.
	Kill() error
}

// ProcStarter starts a worker's process.
type ProcStarter func() (Proc, error)

// sleepProcs starts `sleep` children that live at most lifetime seconds (a backstop if the
// demo itself is killed; on Linux they also die with their parent).
func sleepProcs(lifetime int) ProcStarter {
	return func() (Proc, error) {
		bin, err := exec.LookPath("sleep")
		if err != nil {
			bin = "/bin/sleep"
		}
		cmd := exec.Command(bin, fmt.Sprint(lifetime))
		cmd.Env = []string{} // sleep needs nothing of ours, least of all a token in the environment
		cmd.SysProcAttr = childAttr()
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("sim: start worker process: %w", err)
		}
		p := &sleepProc{cmd: cmd, done: make(chan struct{})}
		go func() { _ = cmd.Wait(); close(p.done) }()
		return p, nil
	}
}

var _ Proc = (*sleepProc)(nil)

type sleepProc struct {
	cmd  *exec.Cmd
	once sync.Once
	done chan struct{}
}

func (p *sleepProc) PID() int { return p.cmd.Process.Pid }

func (p *sleepProc) Kill() error {
	var err error
	p.once.Do(func() {
		select {
		case <-p.done:
			return
		default:
		}
		err = p.cmd.Process.Kill()
		<-p.done
	})
	return err
}
