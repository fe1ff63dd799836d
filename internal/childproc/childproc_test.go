package childproc

import (
	"bufio"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

func TestStartPipedBindsAndPipes(t *testing.T) {
	cmd := exec.Command("cat")
	stdin, stdout, err := StartPiped(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	if pg, err := syscall.Getpgid(cmd.Process.Pid); err != nil || pg != cmd.Process.Pid {
		t.Errorf("child's process group = %d (%v), want its own (%d)", pg, err, cmd.Process.Pid)
	}
	if cmd.SysProcAttr.Pdeathsig != syscall.SIGKILL {
		t.Errorf("Pdeathsig = %v, want SIGKILL", cmd.SysProcAttr.Pdeathsig)
	}
	if _, err := stdin.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ping\n" {
		t.Errorf("echo through the pipes: %q, %v", line, err)
	}
}

func TestStartPipedSaysWhatFailedToStart(t *testing.T) {
	cmd := exec.Command("/nonexistent/hydra-no-such-program")
	_, _, err := StartPiped(cmd)
	if err == nil || !strings.Contains(err.Error(), "hydra-no-such-program") {
		t.Fatalf("starting a program that does not exist: %v, want an error naming it", err)
	}
}

func TestBindKeepsOtherAttributes(t *testing.T) {
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: false, Noctty: true}
	Bind(cmd)
	if !cmd.SysProcAttr.Noctty || !cmd.SysProcAttr.Setpgid {
		t.Errorf("Bind lost or did not set attributes: %+v", cmd.SysProcAttr)
	}
}
