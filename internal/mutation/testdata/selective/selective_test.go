package selective

import "testing"

func TestSmall(t *testing.T) {
	if !Small(2) || Small(4) {
		t.Fatal("Small is wrong")
	}
}

func TestBig(t *testing.T) {
	if !Big(11) || Big(9) {
		t.Fatal("Big is wrong")
	}
}

func TestSign(t *testing.T) {
	if Sign(-1) != "negative" || Sign(1) != "not negative" {
		t.Fatal("Sign is wrong")
	}
}
