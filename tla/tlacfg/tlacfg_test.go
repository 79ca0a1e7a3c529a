package tlacfg_test

import (
	"testing"

	"github.com/drainproof/drainproof/tla/tlacfg"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseFull(t *testing.T) {
	src := `\* The default model
(* a block (* nested *) comment *)
CONSTANTS
    d1 = d1
    Dispatchers = {d1, d2}
    MaxEpoch = 2
    Offset = -3
    Transport = "heartbeat"
    Bugs = {}
    Nested = {{1, 2}, {}}
    Fair = TRUE
CONSTANT X <- MCX
SPECIFICATION Spec
INVARIANTS TypeOK
    DrainSafety
INVARIANT CountAccuracy
PROPERTIES NoAdmissionAfterClose
CONSTRAINT Bound
CHECK_DEADLOCK FALSE
SYMMETRY Perms
ACTION_CONSTRAINT Step1 Step2
VIEW V
ALIAS A
`
	cfg, err := tlacfg.Parse("m.cfg", src)
	require.NoError(t, err)
	want := []tlacfg.Constant{
		{"d1", tlacfg.ModelValue("d1"), 4},
		{"Dispatchers", []any{tlacfg.ModelValue("d1"), tlacfg.ModelValue("d2")}, 5},
		{"MaxEpoch", int64(2), 6},
		{"Offset", int64(-3), 7},
		{"Transport", "heartbeat", 8},
		{"Bugs", []any{}, 9},
		{"Nested", []any{[]any{int64(1), int64(2)}, []any{}}, 10},
		{"Fair", true, 11},
	}
	require.Equal(t, want, cfg.Constants)
	require.Equal(t, 3, cfg.ConstantsLine, "the first CONSTANTS keyword, where an unassigned constant is reported")
	require.Equal(t, tlacfg.Named{"Spec", 13}, cfg.Specification)
	require.Equal(t, []tlacfg.Named{{"TypeOK", 14}, {"DrainSafety", 15}, {"CountAccuracy", 16}}, cfg.Invariants)
	require.Equal(t, []tlacfg.Named{{"NoAdmissionAfterClose", 17}}, cfg.Properties)
	require.Equal(t, []tlacfg.Named{{"Bound", 18}}, cfg.Constraints)
	require.NotNil(t, cfg.CheckDeadlock)
	require.False(t, *cfg.CheckDeadlock)
	require.Equal(t, tlacfg.Named{"Perms", 20}, cfg.Symmetry)
	require.Equal(t, []tlacfg.Named{{"Step1", 21}, {"Step2", 21}}, cfg.ActionConstraints)
	require.Equal(t, tlacfg.Named{"V", 22}, cfg.View)
	require.Equal(t, []tlacfg.Named{{"<-", 12}, {"ALIAS", 23}}, cfg.Unsupported)
	k, ok := cfg.Constant("MaxEpoch")
	require.True(t, ok)
	require.Equal(t, int64(2), k.Value)
}

func TestInitNext(t *testing.T) {
	cfg, err := tlacfg.Parse("m.cfg", "INIT Init\nNEXT Next\n")
	require.NoError(t, err)
	require.Equal(t, "Init", cfg.Init.Name)
	require.Equal(t, "Next", cfg.Next.Name)
	require.Nil(t, cfg.CheckDeadlock)
}

func TestErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"CONSTANTS\n  N = \n", "m.cfg:3: expected a value"},
		{"CONSTANTS\n  N = {1, 2\nINVARIANT X", "m.cfg:3: expected , or } in a set"},
		{"CONSTANTS\n  N 3\n", "m.cfg:2: expected = or <- after constant N"},
		{"INVARIANTS\n", "m.cfg:1: INVARIANTS names nothing"},
		{"FOO Bar\n", `m.cfg:1: expected a keyword`},
		{"\n\nCHECK_DEADLOCK maybe\n", "m.cfg:3: CHECK_DEADLOCK takes TRUE or FALSE"},
		{"CONSTANT S = \"open\n", "m.cfg:1: string is not closed"},
		{"(* never\nclosed", "m.cfg:1: comment (* is never closed"},
		{"SPECIFICATION Spec\nINIT Init\nNEXT Next\n", "m.cfg:1: SPECIFICATION cannot be combined"},
		{"INIT Init\n", "m.cfg:1: INIT and NEXT must be given together"},
		{"SPECIFICATION A B\n", "m.cfg:1: SPECIFICATION takes exactly one name"},
		{"CONSTANTS N = 1\nCONSTANTS N = 2\n", "m.cfg:2: constant N assigned twice (first at line 1)"},
		{"CONSTANTS N = 99999999999999999999\n", "m.cfg:1: integer 99999999999999999999 out of range"},
		{"CONSTANTS N = #\n", `m.cfg:1: unexpected character '#'`},
		{"SPECIFICATION Spec\nSPECIFICATION Spec2\n", "m.cfg:2: SPECIFICATION given twice"},
	} {
		_, err := tlacfg.Parse("m.cfg", tc.src)
		require.Error(t, err, tc.src)
		require.Contains(t, err.Error(), tc.want, tc.src)
		var e *tlacfg.Error
		require.ErrorAs(t, err, &e)
	}
}

func TestParseFileMissing(t *testing.T) {
	_, err := tlacfg.ParseFile("does/not/exist.cfg")
	require.Error(t, err)
}

func FuzzParse(f *testing.F) {
	f.Add("CONSTANTS N = {1, {a, \"s\"}}\nSPECIFICATION Spec\nINVARIANT I\n")
	f.Add("(* x *) \\* y\nINIT I NEXT N")
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := tlacfg.Parse("f.cfg", s)
		if err == nil && cfg == nil {
			t.Fatal("nil config without error")
		}
	})
}
