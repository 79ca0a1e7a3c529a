package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// CA is a certificate authority held in memory.
type CA struct {
	// Cert is the authority's self-signed certificate.
	Cert *x509.Certificate
	// PEM is Cert, PEM-encoded (the --tls-ca file's content).
	PEM []byte
	key *ecdsa.PrivateKey
}

// Leaf is an issued certificate and its key, PEM-encoded.
type Leaf struct {
	// CertPEM is the certificate.
	CertPEM []byte
	// KeyPEM is its private key (PKCS #8).
	KeyPEM []byte
}

// TLSCertificate returns l as a crypto/tls certificate.
func (l Leaf) TLSCertificate() (tls.Certificate, error) { return tls.X509KeyPair(l.CertPEM, l.KeyPEM) }

// Options change an issued certificate's validity (the zero value: from
// an hour ago to a day from now).
type Options struct {
	// NotBefore and NotAfter bound its validity when not zero.
	NotBefore, NotAfter time.Time
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
}

// NewCA returns a fresh authority whose subject's common name is name.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: name, Organization: []string{"drainproof test"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key: key}, nil
}

// Issue returns a certificate for the identity id signed by ca.
func (ca *CA) Issue(id string, o Options) (Leaf, error) {
	return issue(id, o, ca.Cert, ca.key)
}

// SelfSigned returns a certificate for id that signs itself (no
// authority vouches for it).
func SelfSigned(id string) (Leaf, error) { return issue(id, Options{}, nil, nil) }

func issue(id string, o Options, parent *x509.Certificate, signer *ecdsa.PrivateKey) (Leaf, error) {
	if id == "" {
		return Leaf{}, errors.New("pki: empty identity")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Leaf{}, err
	}
	sn, err := serial()
	if err != nil {
		return Leaf{}, err
	}
	uri, err := url.Parse("drainproof://" + url.PathEscape(id))
	if err != nil {
		return Leaf{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: id, Organization: []string{"drainproof test"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
		URIs:         []*url.URL{uri},
	}
	if !o.NotBefore.IsZero() {
		tmpl.NotBefore = o.NotBefore
	}
	if !o.NotAfter.IsZero() {
		tmpl.NotAfter = o.NotAfter
	}
	if parent == nil {
		parent, signer = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return Leaf{}, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Leaf{}, err
	}
	return Leaf{CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})}, nil
}

// Files are the paths of one process's --tls-ca, --tls-cert and
// --tls-key.
type Files struct {
	CA, Cert, Key string
}

// Args returns f as drainproofd's flags.
func (f Files) Args() []string {
	return []string{"--tls-ca", f.CA, "--tls-cert", f.Cert, "--tls-key", f.Key}
}

// WriteCA writes the authority's certificate to dir/ca.pem and returns
// its path.
func (ca *CA) WriteCA(dir string) (string, error) {
	p := filepath.Join(dir, "ca.pem")
	return p, os.WriteFile(p, ca.PEM, 0o600)
}

// WriteIdentity issues a certificate for id and writes it to dir as
// ID.pem and ID-key.pem, with the authority as ca.pem.
func (ca *CA) WriteIdentity(dir, id string) (Files, error) {
	caPath, err := ca.WriteCA(dir)
	if err != nil {
		return Files{}, err
	}
	l, err := ca.Issue(id, Options{})
	if err != nil {
		return Files{}, err
	}
	f := Files{CA: caPath, Cert: filepath.Join(dir, id+".pem"), Key: filepath.Join(dir, id+"-key.pem")}
	if err := os.WriteFile(f.Cert, l.CertPEM, 0o600); err != nil {
		return Files{}, err
	}
	if err := os.WriteFile(f.Key, l.KeyPEM, 0o600); err != nil {
		return Files{}, fmt.Errorf("pki: %w", err)
	}
	return f, nil
}
