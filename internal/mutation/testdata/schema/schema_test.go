package schema

import (
	"io"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestAbove(t *testing.T) {
	if Above(7) || !Above(8) {
		t.Fatal("Above")
	}
}

func TestSum(t *testing.T) {
	if Sum(4) != 6 {
		t.Fatal("Sum")
	}
}

func TestCount(t *testing.T) {
	if w, l := Count("a bb ccccc"); w != 3 || l != 1 {
		t.Fatal("Count", w, l)
	}
}

func TestJoin(t *testing.T) {
	if Join("a", "b") != "ab" {
		t.Fatal("Join")
	}
}

func TestLater(t *testing.T) {
	t0 := time.Unix(0, 0)
	if !Later(t0, time.Second).Equal(t0.Add(2 * time.Second)) {
		t.Fatal("Later")
	}
}

func TestMax(t *testing.T) {
	if Max(2, 3) != 3 || Max(2.5, 1.0) != 2.5 {
		t.Fatal("Max")
	}
}

func TestNeg(t *testing.T) {
	if !Neg(1, 1) || Neg(-5, 1) {
		t.Fatal("Neg")
	}
}

func TestTwice(t *testing.T) {
	Calls = 0
	if !Twice() || Calls != 2 {
		t.Fatal("Twice", Calls)
	}
}

func TestTick(t *testing.T) {
	if Tick(3) != 3 {
		t.Fatal("Tick")
	}
}

func TestSlots(t *testing.T) {
	if Slots() != 6 {
		t.Fatal("Slots")
	}
}

func TestFailed(t *testing.T) {
	if set, eof := Failed(io.EOF); !set || !eof {
		t.Fatal("Failed(io.EOF)")
	}
	if set, eof := Failed(nil); set || eof {
		t.Fatal("Failed(nil)")
	}
}

func TestSpread(t *testing.T) {
	if Spread(1, 2, 3) != 7 {
		t.Fatal("Spread")
	}
}

func TestSet(t *testing.T) {
	if f, s, m := Set(func() {}, nil, nil); !f || s || !m {
		t.Fatal("Set", f, s, m)
	}
}
