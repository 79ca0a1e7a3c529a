package bugs_test

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/drainproof/drainproof/impl/bugs"
)

// TestNoBugNamedMeansNoBugAndNoWord: with DRAINPROOF_BUG empty, FromEnv
// names no bug and no error, and SetupTest returns to its caller (it does
// not end the process) and writes nothing on stderr.
func TestNoBugNamedMeansNoBugAndNoWord(t *testing.T) {
	t.Setenv(bugs.EnvVar, "")
	if name, err := bugs.FromEnv(); name != "" || err != nil {
		t.Fatalf("FromEnv() = %q, %v; want \"\", nil", name, err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	bugs.SetupTest("bugs")
	os.Stderr = stderr
	w.Close()
	said, _ := io.ReadAll(r)
	r.Close()
	if len(said) != 0 {
		t.Errorf("SetupTest with no bug named wrote %q", said)
	}
}

// TestFromEnvRefusesAnUnknownBug: a name that is no bug is an error
// wrapping ErrUnknown, whatever the build.
func TestFromEnvRefusesAnUnknownBug(t *testing.T) {
	t.Setenv(bugs.EnvVar, "NoSuchBug")
	if _, err := bugs.FromEnv(); !errors.Is(err, bugs.ErrUnknown) {
		t.Fatalf("FromEnv() error = %v, want one wrapping ErrUnknown", err)
	}
}
