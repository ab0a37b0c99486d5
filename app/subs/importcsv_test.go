package subs

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/internal/xrtest"
)

const importCSV = `username,password,profile,expiration,email,firstname,lastname,phone,static_ip,mac,balance
alice,pw1,Gold,2030-01-02,alice@x.example,Alice,A,+100,10.0.0.1,aa:bb:cc:dd:ee:01,12.5
bob,pw2,,2030-01-02 10:00:00,,Bob,,,,,
carol,pw3,Nope,,,,,,,,
dave,,Gold,,,,,,,,
erin,pw5,Gold,tomorrow,,,,,,,
alice,pw6,,,,,,,,,
frank,pw7,,,bad-email,,,,,,
"gina",pw8,,,,,,,10.0.0.1,,
hank,pw9,,,,,,,,zz:zz,
ivy,pw10,,,,,,,,,1.0001
`

func TestImportAllOrNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.plan("Gold", "10", 30, 0)
	rep, err := ImportUsers(e.ctx, e.owner, strings.NewReader(importCSV), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []ImportError{
		{4, "profile", "profile_not_assignable", "carol"},
		{5, "password", "password_required", "dave"},
		{6, "expiration", "invalid_expiration", "erin"},
		{7, "username", "duplicate_in_file", "alice"},
		{8, "email", "invalid_email", "frank"},
		{9, "static_ip", "duplicate_in_file", "gina"},
		{10, "mac", "invalid_mac", "hank"},
		{11, "balance", "too_many_decimals", "ivy"},
	}
	if fmt.Sprint(rep.Errors) != fmt.Sprint(want) {
		t.Fatalf("errors:\n%v\nwant\n%v", rep.Errors, want)
	}
	if rep.Rows != 10 || rep.Imported != 0 || rep.Failed != 8 {
		t.Fatalf("%+v", rep)
	}
	if n := e.scalar(`SELECT COUNT(*) FROM users`); n != 0 {
		t.Fatalf("all-or-nothing stored %d users", n)
	}
}

func TestImportPartialAndDryRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.plan("Gold", "10", 30, 0)
	dry, err := ImportUsers(e.ctx, e.owner, strings.NewReader(importCSV), ImportOptions{Partial: true, DryRun: true})
	if err != nil || dry.Imported != 2 || dry.Failed != 8 || e.scalar(`SELECT COUNT(*) FROM users`) != 0 {
		t.Fatalf("dry run %+v %v", dry, err)
	}
	res := e.manager(e.owner.ManagerID, "res1")
	rep, err := ImportUsers(e.ctx, e.owner, strings.NewReader(importCSV), ImportOptions{Partial: true, ParentUsername: "res1"})
	if err != nil || rep.Imported != 2 || rep.Failed != 8 {
		t.Fatalf("%+v %v", rep, err)
	}
	a, err := Resolve(e.ctx, e.owner, e.scalarText(`SELECT lookup_token FROM users WHERE username = 'alice'`))
	if err != nil {
		t.Fatal(err)
	}
	if a.ParentID != res || a.ProfileName != "Gold" || a.Balance != xrtest.Money("12.5") || a.StaticIP != "10.0.0.1" ||
		!a.MacLockEnabled || fmt.Sprint(a.MacLockedAddrs) != "[AA:BB:CC:DD:EE:01]" || a.Expiration.Format(app.TimeLayout) != "2030-01-02 00:00:00" {
		t.Fatalf("%+v", a)
	}
	e.ledgerConsistent(a.ID)
	// Importing again: every row now conflicts with the stored ones.
	again, _ := ImportUsers(e.ctx, e.owner, strings.NewReader("username,password\nalice,x\nnew1,y\n"), ImportOptions{})
	if again.Imported != 0 || len(again.Errors) != 1 || again.Errors[0] != (ImportError{2, "username", "username_taken", "alice"}) {
		t.Fatalf("%+v", again)
	}
	if e.scalar(`SELECT COUNT(*) FROM users WHERE username = 'new1'`) != 0 {
		t.Fatal("all-or-nothing imported a row")
	}
}

func TestImportFileErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for in, reason := range map[string]string{
		"":                            "header_required",
		"alice,pw\n":                  "unknown_column",
		"username,email\nalice,a@b.c": "header_required",
		"username,password,color\n":   "unknown_column",
	} {
		_, err := ImportUsers(e.ctx, e.owner, strings.NewReader(in), ImportOptions{})
		xrtest.WantReason(t, err, 400, reason)
	}
	_, err := ImportUsers(e.ctx, e.owner, strings.NewReader("username,password\n"), ImportOptions{ParentUsername: "ghost"})
	xrtest.WantReason(t, err, 400, "invalid_parent_id")
	// A reseller cannot import under a manager outside its subtree.
	a := e.manager(e.owner.ManagerID, "ra")
	e.manager(e.owner.ManagerID, "rb")
	_, err = ImportUsers(e.ctx, xrtest.Reseller(e.ten, a), strings.NewReader("username,password\n"), ImportOptions{ParentUsername: "rb"})
	xrtest.WantReason(t, err, 400, "invalid_parent_id")
}

func TestImportLicenceCap(t *testing.T) {
	t.Parallel()
	three := int64(3)
	e := newEnvIn(t, t.TempDir(), &three)
	e.user("x1", e.owner.ManagerID, nil)
	csv := "username,password\nn1,a\nn2,b\nn3,c\n"
	rep, err := ImportUsers(e.ctx, e.owner, strings.NewReader(csv), ImportOptions{})
	if err != nil || rep.Imported != 0 || len(rep.Errors) != 1 || rep.Errors[0].Reason != "license_locked" || rep.Errors[0].Line != 4 {
		t.Fatalf("%+v %v", rep, err)
	}
	rep, _ = ImportUsers(e.ctx, e.owner, strings.NewReader(csv), ImportOptions{Partial: true})
	if n, err := e.ten.CountUsers(e.ctx); err != nil || rep.Imported != 2 || n != 3 {
		t.Fatalf("%+v", rep)
	}
}

func (e *env) scalarText(q string, args ...any) string {
	e.t.Helper()
	var s string
	if err := e.ten.DB.R.QueryRow(q, args...).Scan(&s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// BenchmarkImport100k: go test ./app/subs -run '^$' -bench Import100k -benchtime 1x
func BenchmarkImport100k(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("username,password,profile,expiration,email,firstname,lastname,phone,static_ip,mac,balance\n")
	for i := 0; i < 100_000; i++ {
		ip := ""
		if i%4 == 0 {
			ip = fmt.Sprintf("10.%d.%d.%d", (i>>16)&255, (i>>8)&255, i&255)
		}
		fmt.Fprintf(&buf, "user%06d,pw%d,Gold,2030-01-01,user%06d@mail.example,%s,%s,+1555%07d,%s,,%d\n", i, i, i,
			firstNames[i%len(firstNames)], lastNames[i%len(lastNames)], i, ip, i%3)
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := newEnv(b)
		e.plan("Gold", "10", 30, 0)
		b.StartTimer()
		t0 := time.Now()
		rep, err := ImportUsers(e.ctx, e.owner, bytes.NewReader(buf.Bytes()), ImportOptions{})
		if err != nil || rep.Imported != 100_000 {
			b.Fatalf("%v %+v", err, rep.Errors[:min(len(rep.Errors), 5)])
		}
		b.ReportMetric(time.Since(t0).Seconds(), "s/100k")
	}
}
