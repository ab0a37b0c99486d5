package radiusd_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"xr/radiusd"
)

// Benchmarks of the TLS transports (numbers, never assertions):
//
//	go test -run '^$' -bench 'EAPPEAP' -benchtime 200x ./radiusd/
//	go test -run '^$' -bench 'AuthPAPRadSec|AuthPAPUDPOneSocket' -benchtime 100000x ./radiusd/
//
// BenchmarkEAPPEAP signs in with Debian's eapol_test (PEAP, MS-CHAPv2
// inside, full TLS handshakes, MS-MPPE keys checked by eapol_test),
// XR_BENCH_EAP_PROCS processes (default 8) at a time, each re-authenticating
// in a loop. By default it measures the server of this process; with
// XR_BENCH_EAP_SERVER=host:port (and XR_BENCH_EAP_SECRET, XR_BENCH_EAP_PID)
// it measures another server, such as FreeRADIUS (radiusd/bench_eap.sh runs
// both). server-cpu-ms/signin is the server's CPU time per sign-in.

// benchPKI is a CA with an RSA server certificate (as most EAP servers'),
// written to dir.
type benchPKI struct {
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	server tls.Certificate
}

func newBenchPKI(b testing.TB) *benchPKI {
	b.Helper()
	p := &benchPKI{dir: b.TempDir()}
	var err error
	if p.caKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		b.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench CA"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &p.caKey.PublicKey, p.caKey)
	if err != nil {
		b.Fatal(err)
	}
	p.ca, _ = x509.ParseCertificate(der)
	writeBenchPEM(b, filepath.Join(p.dir, "ca.pem"), "CERTIFICATE", der)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	p.server = p.leaf(b, key, &key.PublicKey, "radius.bench", x509.ExtKeyUsageServerAuth)
	return p
}

func (p *benchPKI) leaf(b testing.TB, key, pub any, cn string, usage x509.ExtKeyUsage) tls.Certificate {
	b.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn}, DNSNames: []string{cn},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, pub, p.caKey)
	if err != nil {
		b.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

func writeBenchPEM(b testing.TB, path, typ string, der []byte) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		b.Fatal(err)
	}
}

// procCPU is a process's CPU time from /proc (another server's).
func procCPU(b *testing.B, pid int) time.Duration {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+stime) * 10 * time.Millisecond // USER_HZ = 100
}

func BenchmarkEAPPEAP(b *testing.B) {
	bin, err := exec.LookPath("eapol_test")
	if err != nil {
		b.Skip("SKIPPED: eapol_test is not installed (apt-get install eapoltest)")
	}
	pki := newBenchPKI(b)
	addr, secret := os.Getenv("XR_BENCH_EAP_SERVER"), os.Getenv("XR_BENCH_EAP_SECRET")
	cpu := cpuTime
	if addr == "" {
		addr, secret = startEAPBenchServer(b, pki), benchSecret
	} else {
		pid, err := strconv.Atoi(os.Getenv("XR_BENCH_EAP_PID"))
		if err != nil {
			b.Fatal("XR_BENCH_EAP_PID: the other server's process id")
		}
		cpu = func() time.Duration { return procCPU(b, pid) }
	}
	procs := 8
	if v, err := strconv.Atoi(os.Getenv("XR_BENCH_EAP_PROCS")); err == nil && v > 0 {
		procs = v
	}
	caFile := filepath.Join(pki.dir, "ca.pem")
	if v := os.Getenv("XR_BENCH_EAP_CA"); v != "" {
		caFile = v
	}
	host, port, _ := net.SplitHostPort(addr)
	// Each process signs in as its own user, b.N/procs times (-r counts
	// re-authentications after the first).
	per := max(1, b.N/procs)
	confs := make([]string, procs)
	for i := range procs {
		confs[i] = filepath.Join(b.TempDir(), "eapol.conf")
		ca := ""
		if caFile != "none" {
			ca = fmt.Sprintf("ca_cert=%q\n", caFile)
		}
		os.WriteFile(confs[i], []byte(fmt.Sprintf("network={\nkey_mgmt=WPA-EAP\neap=PEAP\nidentity=\"user%05d\"\npassword=\"pass%05d\"\nphase2=\"auth=MSCHAPV2\"\n%s}\n",
			i+1, i+1, ca)), 0o600)
	}
	// eapol_test writes its debug log to files: reading it here would
	// count as server CPU.
	logs := make([]string, procs)
	for i := range logs {
		logs[i] = filepath.Join(b.TempDir(), "eapol.log")
	}
	var wg sync.WaitGroup
	b.ResetTimer()
	t0, c0 := time.Now(), cpu()
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := os.Create(logs[i])
			if err != nil {
				return
			}
			defer f.Close()
			cmd := exec.Command(bin, "-c", confs[i], "-a", host, "-p", port, "-s", secret, "-r", strconv.Itoa(per-1), "-t", "60")
			cmd.Stdout, cmd.Stderr = f, f
			_ = cmd.Run() // its log says how many sign-ins succeeded
		}()
	}
	wg.Wait()
	elapsed, used := time.Since(t0), cpu()-c0
	b.StopTimer()
	var ok, failed int64
	for _, path := range logs {
		out, _ := os.ReadFile(path)
		n := int64(strings.Count(string(out), "EAP authentication completed successfully"))
		ok += n
		failed += int64(per) - n
		if n < int64(per) && testing.Verbose() {
			b.Logf("eapol_test:\n%s", lastLines(string(out), 15))
		}
	}
	if ok == 0 {
		b.Fatalf("no sign-in succeeded (%d failed)", failed)
	}
	b.ReportMetric(float64(ok)/elapsed.Seconds(), "signins/s")
	b.ReportMetric(float64(used.Microseconds())/1000/float64(ok), "server-cpu-ms/signin")
	b.ReportMetric(float64(failed), "failed")
}

func lastLines(s string, n int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// startEAPBenchServer serves UDP with PEAP on, users user00001.. with
// passwords pass00001.. (as the FreeRADIUS bench setup has them).
func startEAPBenchServer(b testing.TB, pki *benchPKI) string {
	users := make(map[string]radiusd.Authorization, 1000)
	for i := 1; i <= 1000; i++ {
		users[fmt.Sprintf("user%05d", i)] = radiusd.Authorization{Password: fmt.Sprintf("pass%05d", i), SessionTimeout: 3600}
	}
	nas := &radiusd.NAS{TenantSlug: "bench", ID: 1, Name: "sim", IP: netip.MustParseAddr("127.0.0.1"),
		Secret: []byte(benchSecret), Type: radiusd.NASTypeGeneric, RequireMessageAuthenticator: true}
	s := &radiusd.Server{Directory: memDirectory{nas}, Authorizer: &memAuthorizer{users: users}, Accounter: &memAccounter{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), EAPTLS: &tls.Config{Certificates: []tls.Certificate{pki.server}}}
	ac, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(ac, nil)
	b.Cleanup(func() { shutdownBench(s) })
	return ac.LocalAddr().String()
}

func shutdownBench(s *radiusd.Server) {
	ctx, cancel := contextTimeout(5 * time.Second)
	defer cancel()
	s.Shutdown(ctx)
}

// memRadSecDirectory binds one certificate to the bench NAS.
type memRadSecDirectory struct {
	fp  [32]byte
	nas *radiusd.NAS
}

func (d memRadSecDirectory) LookupRadSecNAS(fp [32]byte) (*radiusd.NAS, bool) {
	return d.nas, fp == d.fp
}

// BenchmarkAuthPAPRadSec: PAP with Message-Authenticator over one RadSec
// connection, 64 requests in flight on it; the load generator is a child
// process (TestRadSecLoadChild).
func BenchmarkAuthPAPRadSec(b *testing.B) {
	pki := newBenchPKI(b)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	client := pki.leaf(b, key, &key.PublicKey, "nas.bench", x509.ExtKeyUsageClientAuth)
	writeBenchPEM(b, filepath.Join(pki.dir, "client.pem"), "CERTIFICATE", client.Certificate[0])
	kd, _ := x509.MarshalPKCS8PrivateKey(key)
	writeBenchPEM(b, filepath.Join(pki.dir, "client.key"), "PRIVATE KEY", kd)
	users := make(map[string]radiusd.Authorization, 10000)
	for i := range 10000 {
		users[fmt.Sprintf("user%05d", i)] = radiusd.Authorization{Password: "pass", SessionTimeout: 86400, RateDownKbps: 20480, RateUpKbps: 5120}
	}
	nas := &radiusd.NAS{TenantSlug: "bench", ID: 1, Name: "sim", IP: netip.MustParseAddr("192.0.2.1"),
		Secret: []byte(radiusd.RadSecSecret), Type: radiusd.NASTypeMikrotik, RequireMessageAuthenticator: true, RadSec: true}
	pool := x509.NewCertPool()
	pool.AddCert(pki.ca)
	s := &radiusd.Server{Directory: memDirectory{nas}, Authorizer: &memAuthorizer{users: users}, Accounter: &memAccounter{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		RadSec: &radiusd.RadSecConfig{TLS: &tls.Config{Certificates: []tls.Certificate{pki.server}, ClientCAs: pool},
			Directory: memRadSecDirectory{fp: sha256.Sum256(client.Certificate[0]), nas: nas}}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.ServeListeners(radiusd.Listeners{RadSec: ln})
	b.Cleanup(func() { shutdownBench(s) })
	cfg := radsecLoad{Addr: ln.Addr().String(), Dir: pki.dir, Count: b.N, InFlight: 64}
	js, _ := json.Marshal(cfg)
	cmd := exec.Command(os.Args[0], "-test.run=^TestRadSecLoadChild$", "-test.bench=^$", "-test.count=1")
	cmd.Env = append(os.Environ(), "XR_RADSEC_CHILD="+string(js))
	b.ResetTimer()
	c0 := cpuTime()
	out, err := cmd.CombinedOutput()
	used := cpuTime() - c0
	b.StopTimer()
	if err != nil {
		b.Fatalf("load generator: %v\n%s", err, out)
	}
	var rep radsecReport
	for _, line := range strings.Split(string(out), "\n") {
		if j, ok := strings.CutPrefix(line, "RADSECREPORT "); ok {
			json.Unmarshal([]byte(j), &rep)
		}
	}
	if rep.Answered == 0 {
		b.Fatalf("no report:\n%s", out)
	}
	b.ReportMetric(rep.PerSecond, "auth/s")
	b.ReportMetric(rep.P50Ms, "p50-ms")
	b.ReportMetric(rep.P99Ms, "p99-ms")
	b.ReportMetric(float64(used.Microseconds())/float64(rep.Answered), "server-cpu-µs/req")
}

// BenchmarkAuthPAPUDPOneSocket is BenchmarkAuthPAP's UDP load at the same
// 64 in flight, beside the RadSec one.
func BenchmarkAuthPAPUDPOneSocket(b *testing.B) { BenchmarkAuthPAP(b) }

type radsecLoad struct {
	Addr, Dir       string
	Count, InFlight int
}

type radsecReport struct {
	Answered          int
	PerSecond         float64
	P50Ms, P99Ms      float64
	Unanswered, Wrong int
}

// TestRadSecLoadChild keeps InFlight PAP requests on one RadSec
// connection until Count are answered; it runs only as the benchmark's
// child.
func TestRadSecLoadChild(t *testing.T) {
	js := os.Getenv("XR_RADSEC_CHILD")
	if js == "" {
		t.Skip("runs only as a benchmark's child process")
	}
	var cfg radsecLoad
	json.Unmarshal([]byte(js), &cfg)
	pair, err := tls.LoadX509KeyPair(filepath.Join(cfg.Dir, "client.pem"), filepath.Join(cfg.Dir, "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(filepath.Join(cfg.Dir, "ca.pem"))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	c, err := tls.Dial("tcp", cfg.Addr, &tls.Config{RootCAs: pool, ServerName: "radius.bench", Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	secret := []byte(radiusd.RadSecSecret)
	slots := make(chan byte, cfg.InFlight)
	for i := range cfg.InFlight {
		slots <- byte(i)
	}
	var sent [256]time.Time
	var mu sync.Mutex
	lat := make([]time.Duration, 0, cfg.Count)
	done := make(chan struct{})
	go func() { // reader
		defer close(done)
		var hdr [4]byte
		buf := make([]byte, 4096)
		for len(lat) < cfg.Count {
			if _, err := io.ReadFull(c, hdr[:]); err != nil {
				return
			}
			n := int(binary.BigEndian.Uint16(hdr[2:]))
			if _, err := io.ReadFull(c, buf[:n-4]); err != nil {
				return
			}
			mu.Lock()
			lat = append(lat, time.Since(sent[hdr[1]]))
			mu.Unlock()
			slots <- hdr[1]
		}
	}()
	t0 := time.Now()
	w := make([]byte, 0, 256)
	for i := 0; i < cfg.Count; i++ {
		id := <-slots
		w = papPacket(w[:0], id, fmt.Sprintf("user%05d", i%10000), "pass", secret)
		mu.Lock()
		sent[id] = time.Now()
		mu.Unlock()
		if _, err := c.Write(w); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
	}
	elapsed := time.Since(t0)
	mu.Lock()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	rep := radsecReport{Answered: len(lat), PerSecond: float64(len(lat)) / elapsed.Seconds(), Unanswered: cfg.Count - len(lat)}
	if len(lat) > 0 {
		rep.P50Ms = float64(lat[len(lat)/2].Microseconds()) / 1000
		rep.P99Ms = float64(lat[len(lat)*99/100].Microseconds()) / 1000
	}
	mu.Unlock()
	out, _ := json.Marshal(rep)
	fmt.Printf("\nRADSECREPORT %s\n", out)
}

// papPacket writes an Access-Request with a Message-Authenticator first.
func papPacket(b []byte, id byte, user, pass string, secret []byte) []byte {
	var auth [16]byte
	rand.Read(auth[:])
	b = append(b, 1, id, 0, 0)
	b = append(b, auth[:]...)
	b = append(b, 80, 18)
	b = append(b, make([]byte, 16)...)
	b = append(b, 1, byte(2+len(user)))
	b = append(b, user...)
	// RFC 2865 5.2: the password XORed with MD5(secret + authenticator).
	pw := make([]byte, 16)
	copy(pw, pass)
	h := md5.Sum(append(append([]byte{}, secret...), auth[:]...))
	for i := range pw {
		pw[i] ^= h[i]
	}
	b = append(b, 2, 18)
	b = append(b, pw...)
	binary.BigEndian.PutUint16(b[2:4], uint16(len(b)))
	m := hmac.New(md5.New, secret)
	m.Write(b)
	copy(b[22:38], m.Sum(nil))
	return b
}

func contextTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
