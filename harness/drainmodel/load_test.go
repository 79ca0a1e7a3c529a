package drainmodel

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every shipped model assigns every constant of the module, as TLC
// requires; a cfg without one is refused with the file, the line of the
// CONSTANTS keyword and the constant, where it used to run with the
// constant's zero value (an empty Bugs, a MaxEpoch of 0 reported as "got
// 0" at line 1).
func TestUnassignedConstantsRefused(t *testing.T) {
	cfgs, err := filepath.Glob("../../tla/MCDrainRegistration*.cfg")
	require.NoError(t, err)
	require.NotEmpty(t, cfgs)
	for _, cfg := range cfgs {
		_, _, err := Load(cfg, true)
		require.NoError(t, err, cfg)
	}
	b, err := os.ReadFile("../../tla/MCDrainRegistration.cfg")
	require.NoError(t, err)
	text := string(b)
	line := 1 + strings.Count(text[:strings.Index(text, "CONSTANTS")], "\n")
	for _, name := range moduleConstants {
		lines := strings.Split(text, "\n")
		var kept []string
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				continue
			}
			kept = append(kept, l)
		}
		require.Less(t, len(kept), len(lines), name)
		path := filepath.Join(t.TempDir(), "MC.cfg")
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(kept, "\n")), 0o644))
		_, _, err := Load(path, true)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), path+":"+strconv.Itoa(line)+": the constant "+name+" is not assigned a value", name)
	}
}
