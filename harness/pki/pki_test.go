package pki

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func verify(t *testing.T, ca *CA, l Leaf, at time.Time) error {
	t.Helper()
	c, err := l.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	return err
}

// TestIssued: an issued certificate verifies against its authority only,
// names its identity, and an expired or self-signed one does not verify.
func TestIssued(t *testing.T) {
	ca, err := NewCA("test ca")
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewCA("other ca")
	if err != nil {
		t.Fatal(err)
	}
	good, err := ca.Issue("n1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := verify(t, ca, good, time.Now()); err != nil {
		t.Errorf("issued certificate: %v", err)
	}
	if err := verify(t, other, good, time.Now()); err == nil {
		t.Error("a certificate verified against another authority")
	}
	old, err := ca.Issue("n1", Options{NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if err := verify(t, ca, old, time.Now()); err == nil {
		t.Error("an expired certificate verified")
	}
	self, err := SelfSigned("n1")
	if err != nil {
		t.Fatal(err)
	}
	if err := verify(t, ca, self, time.Now()); err == nil {
		t.Error("a self-signed certificate verified")
	}
	c, _ := good.TLSCertificate()
	leaf, _ := x509.ParseCertificate(c.Certificate[0])
	if leaf.Subject.CommonName != "n1" || len(leaf.URIs) != 1 || leaf.URIs[0].String() != "drainproof://n1" {
		t.Errorf("identity: CN %q, URIs %v", leaf.Subject.CommonName, leaf.URIs)
	}
	if _, err := ca.Issue("", Options{}); err == nil {
		t.Error("an empty identity was issued")
	}
}

func TestWriteIdentity(t *testing.T) {
	ca, err := NewCA("test ca")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f, err := ca.WriteIdentity(dir, "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	if f.CA != filepath.Join(dir, "ca.pem") || len(f.Args()) != 6 {
		t.Errorf("files %+v, args %v", f, f.Args())
	}
	for _, p := range []string{f.CA, f.Cert, f.Key} {
		if b, err := os.ReadFile(p); err != nil || len(b) == 0 {
			t.Errorf("%s: %v (%d bytes)", p, err, len(b))
		}
	}
}
