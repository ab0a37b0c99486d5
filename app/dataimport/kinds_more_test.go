package dataimport

import (
	"strings"
	"testing"

	"xr/app"
	"xr/app/aaa"
	"xr/app/monitoring"
	"xr/internal/xrtest"
)

func reasons(rep *Report) string {
	var b []string
	for _, e := range rep.Errors {
		b = append(b, itoa(e.Line)+":"+e.Outcome+":"+e.Field+":"+e.Reason)
	}
	return strings.Join(b, " ")
}

// Managers: a tree (a parent from an earlier line), opening balances
// through the wallet journal, line errors, a re-run with skip and update,
// and a reseller that pays the balances it hands down and stays in its
// subtree.
func TestImportManagersKind(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	root := e.owner.ManagerID
	body := "Username,Parent,Email,Balance,Password,Phone\n" +
		"north,,north@example.com,150.5,North-2026,111\n" +
		"north-a,north,,20,North-A-2026,\n" +
		"bad user!,north,,1,Bad-User-2026,\n" +
		"south,ghost,,0,South-2026,\n" +
		"east,,,1.2345,East-2026,\n" +
		"north-a,,,,North-A-2026,\n"
	path := e.file("managers.csv", body)
	rep, err := Validate(e.ctx, e.owner, path, "", Spec{Kind: KindManagers})
	if err != nil {
		t.Fatal(err)
	}
	want := "4:failed:username:invalid_username 5:failed:parent:invalid_parent_id 6:failed:balance:too_many_decimals 7:failed:username:duplicate_in_file"
	if rep.Rows != 6 || rep.Created != 2 || reasons(rep) != want || rep.Mapping["parent"] != "Parent" {
		t.Fatalf("%+v\n%s", rep, reasons(rep))
	}
	if len(rep.Preview) != 2 || rep.Preview[1].Values["parent"] != "north" || rep.Preview[0].Values["balance"] != "150.5" {
		t.Fatalf("preview %+v", rep.Preview)
	}
	// Without partial nothing is written.
	if rep, err := Import(e.ctx, e.owner, path, "", Spec{Kind: KindManagers}); err != nil || rep.Committed {
		t.Fatalf("%+v %v", rep, err)
	}
	if n := e.scalar(`SELECT count(*) FROM managers`); n != 1 {
		t.Fatalf("managers %d", n)
	}
	rep, err = Import(e.ctx, e.owner, path, "", Spec{Kind: KindManagers, Partial: true})
	if err != nil || rep.Created != 2 || rep.Failed != 4 || !rep.Committed {
		t.Fatalf("%+v %v", rep, err)
	}
	north := e.scalar(`SELECT id FROM managers WHERE username = 'north'`)
	if p := e.scalar(`SELECT parent_id FROM managers WHERE username = 'north'`); p != root {
		t.Fatalf("north's parent %d", p)
	}
	if p := e.scalar(`SELECT parent_id FROM managers WHERE username = 'north-a'`); p != north {
		t.Fatalf("north-a's parent %d", p)
	}
	if b := e.scalar(`SELECT balance FROM managers WHERE id = ?`, north); b != 150500 {
		t.Fatalf("north's balance %d", b)
	}
	if n := e.scalar(`SELECT count(*) FROM manager_tree WHERE descendant_id = (SELECT id FROM managers WHERE username = 'north-a')`); n != 3 {
		t.Fatalf("closure rows %d", n)
	}
	if n := e.scalar(`SELECT count(*) FROM manager_journal WHERE kind = 'opening_balance'`); n != 2 {
		t.Fatalf("journal %d", n)
	}
	// Re-run: skip leaves them; update overwrites contact fields, never the
	// balance.
	fix := e.file("again.csv", "username,phone,balance\nnorth,222,999\n")
	if rep, err := Import(e.ctx, e.owner, fix, "", Spec{Kind: KindManagers, OnDuplicate: "skip"}); err != nil || rep.Skipped != 1 || rep.Created != 0 {
		t.Fatalf("skip %+v %v", rep, err)
	}
	rep, err = Import(e.ctx, e.owner, fix, "", Spec{Kind: KindManagers})
	if err != nil || reasons(rep) != "2:failed:username:username_taken" || rep.Committed {
		t.Fatalf("fail %+v %v", rep, err)
	}
	if rep, err := Import(e.ctx, e.owner, fix, "", Spec{Kind: KindManagers, OnDuplicate: "update"}); err != nil || rep.Updated != 1 {
		t.Fatalf("update %+v %v", rep, err)
	}
	var phone string
	if err := e.ten.DB.R.QueryRow(`SELECT phone FROM managers WHERE id = ?`, north).Scan(&phone); err != nil || phone != "222" {
		t.Fatalf("phone %q %v", phone, err)
	}
	if b := e.scalar(`SELECT balance FROM managers WHERE id = ?`, north); b != 150500 {
		t.Fatalf("balance changed by update: %d", b)
	}
	// A reseller: parents outside its subtree are refused, a manager
	// outside it is taken (never updated), and the balances it hands down
	// come out of its own wallet.
	e.manager(root, "r2")
	act := xrtest.Reseller(e.ten, north)
	rs := e.file("r.csv", "username,parent,balance,password\nnorth-b,north-a,30,North-B-2026\nsouth2,r2,1,South-2-2026\nr2,,,R2-pass-2026\n")
	rep, err = Import(e.ctx, act, rs, "", Spec{Kind: KindManagers, Partial: true, OnDuplicate: "update"})
	if err != nil || rep.Created != 1 || reasons(rep) != "3:failed:parent:invalid_parent_id 4:failed:username:username_taken" {
		t.Fatalf("reseller %+v %v\n%s", rep, err, reasons(rep))
	}
	if b := e.scalar(`SELECT balance FROM managers WHERE id = ?`, north); b != 120500 {
		t.Fatalf("the reseller's wallet %d", b)
	}
	// A generated password when the policy asks for it.
	gen := e.file("g.csv", "username\nwest\n")
	if rep, err := Validate(e.ctx, e.owner, gen, "", Spec{Kind: KindManagers}); err != nil || reasons(rep) != "2:failed:password:password_required" {
		t.Fatalf("%+v %v", rep, err)
	}
	if rep, err := Import(e.ctx, e.owner, gen, "", Spec{Kind: KindManagers, PasswordPolicy: "generate"}); err != nil || rep.Created != 1 {
		t.Fatalf("generate %+v %v", rep, err)
	}
}

// Cards into an existing series: the series' type decides the logins,
// duplicates are refused (a re-run skips its own cards), the stock
// counters follow.
func TestImportCardsKind(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := app.StampNow()
	plan := xrtest.Exec(t, e.ten, `INSERT INTO profiles(name, created_at, updated_at) VALUES ('Day', ?, ?)`, now, now)
	mk := func(name, mode, status string) int64 {
		var p any
		if mode == "voucher_account" {
			p = plan
		}
		return xrtest.Exec(t, e.ten, `INSERT INTO card_batches(name, card_mode, plan_id, quantity, face_value, code_length, code_charset, expiration, status,
			processed, owner_manager_id, created_by, created_at, updated_at) VALUES (?,?,?,1,5000,8,'numeric','2030-01-01 00:00:00',?,0,?,?,?,?)`,
			name, mode, p, status, e.owner.ManagerID, e.owner.ManagerID, now, now)
	}
	refill := mk("Refill 5", "refill_balance", "ready")
	prepaid := mk("Prepaid day", "voucher_account", "ready")
	mk("Busy", "refill_balance", "generating")
	if _, err := Import(e.ctx, e.owner, e.file("u.csv", "username,password\ntaken,pw\n"), "", Spec{}); err != nil {
		t.Fatal(err)
	}
	body := "code,series,serial,username,password\n" +
		"1111-2222-3333,Refill 5,,,\n" +
		"1111 2222 4444,Refill 5,R-2,,\n" +
		"55556666,Prepaid day,,day1,pw1\n" +
		"55557777,Prepaid day,,,\n" +
		"55558888,Refill 5,,someone,pw\n" +
		"ab!,Refill 5,,,\n" +
		"99990000,Busy,,,\n" +
		"111122223333,Refill 5,,,\n" +
		"66667777,Prepaid day,,taken,pw\n" +
		"12121212,Nope,,,\n"
	path := e.file("cards.csv", body)
	rep, err := Validate(e.ctx, e.owner, path, "", Spec{Kind: KindCards})
	want := "5:failed:username:card_login_required 6:failed:username:card_login_not_allowed 7:failed:code:invalid_card_code " +
		"8:failed:series:card_batch_not_ready 9:failed:code:duplicate_in_file 10:failed:username:username_taken 11:failed:series:invalid_series"
	if err != nil || rep.Created != 3 || reasons(rep) != want {
		t.Fatalf("%+v %v\n%s", rep, err, reasons(rep))
	}
	rep, err = Import(e.ctx, e.owner, path, "", Spec{Kind: KindCards, Partial: true})
	if err != nil || rep.Created != 3 || rep.Failed != 7 {
		t.Fatalf("%+v %v", rep, err)
	}
	if n := e.scalar(`SELECT quantity FROM card_batches WHERE id = ?`, refill); n != 2 {
		t.Fatalf("refill quantity %d", n)
	}
	if n := e.scalar(`SELECT unused + available * 10 + processed * 100 FROM card_batches WHERE id = ?`, refill); n != 222 {
		t.Fatalf("refill counters %d", n)
	}
	if n := e.scalar(`SELECT count(*) FROM cards WHERE batch_id = ? AND code = '111122224444' AND serial = 'R-2' AND username IS NULL`, refill); n != 1 {
		t.Fatal("refill card")
	}
	if n := e.scalar(`SELECT count(*) FROM cards WHERE batch_id = ? AND code = '55556666' AND username = 'day1' AND password = 'pw1'`, prepaid); n != 1 {
		t.Fatal("prepaid card")
	}
	if n := e.scalar(`SELECT count(*) FROM card_events WHERE kind = 'imported'`); n != 2 {
		t.Fatalf("timeline %d", n)
	}
	// Re-run: its own cards are skipped, refused with code_taken or updated
	// (an unused card's serial and login); a code of another series is
	// always refused.
	again := e.file("again.csv", "code,serial\n111122223333,\n55556666,\n")
	rep, err = Import(e.ctx, e.owner, again, "", Spec{Kind: KindCards, Series: "Refill 5", OnDuplicate: "skip", Partial: true})
	if err != nil || rep.Skipped != 1 || reasons(rep) != "2:skipped:: 3:failed:code:code_taken" {
		t.Fatalf("skip %+v %v\n%s", rep, err, reasons(rep))
	}
	upd := e.file("upd.csv", "code,serial,username,password\n55556666,P-9,day1b,pw2\n")
	if rep, err := Import(e.ctx, e.owner, upd, "", Spec{Kind: KindCards, Series: "Prepaid day", OnDuplicate: "update"}); err != nil || rep.Updated != 1 {
		t.Fatalf("update %+v %v", rep, err)
	}
	if n := e.scalar(`SELECT count(*) FROM cards WHERE code = '55556666' AND serial = 'P-9' AND username = 'day1b' AND password = 'pw2'`); n != 1 {
		t.Fatal("card not updated")
	}
	xrtest.Exec(t, e.ten, `UPDATE cards SET state = 'consumed' WHERE code = '55556666'`)
	rep, err = Import(e.ctx, e.owner, upd, "", Spec{Kind: KindCards, Series: "Prepaid day", OnDuplicate: "update", Partial: true})
	if err != nil || reasons(rep) != "2:failed:code:card_consumed" {
		t.Fatalf("consumed %+v %v", rep, err)
	}
	_, err = Validate(e.ctx, e.owner, again, "", Spec{Kind: KindCards, Series: "Busy"})
	xrtest.WantReason(t, err, 409, "card_batch_not_ready")
	// A reseller sees no series of another subtree.
	other := e.manager(e.owner.ManagerID, "other")
	_, err = Validate(e.ctx, xrtest.Reseller(e.ten, other), again, "", Spec{Kind: KindCards, Series: "Refill 5"})
	xrtest.WantReason(t, err, 400, "invalid_series")
}

// Device coordinates by name or address, through monitoring's function.
func TestImportCoordinatesKind(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := aaa.CreateNAS(e.ctx, e.owner, aaa.NASInput{Name: some("core-1"), IP: some("10.9.0.1"), Secret: some("s3cr3t-shared-key-1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := monitoring.CreateDevice(e.ctx, e.owner, monitoring.DeviceInput{Name: "tower-switch", Address: "10.9.0.50", Type: "switch"}); err != nil {
		t.Fatal(err)
	}
	if _, err := monitoring.CreateDevice(e.ctx, e.owner, monitoring.DeviceInput{Name: "core-1", Address: "10.9.0.60", Type: "router"}); err != nil {
		t.Fatal(err)
	}
	body := "Device,Kind,Latitude,Longitude\n" +
		"10.9.0.1,,33.3,44.4\n" +
		"TOWER-SWITCH,,33.31,44.41\n" +
		"core-1,,1,1\n" +
		"ghost,,1,1\n" +
		"10.9.0.60,device,95,1\n"
	path := e.file("geo.csv", body)
	rep, err := Validate(e.ctx, e.owner, path, "", Spec{Kind: KindCoordinates})
	want := "4:failed:device:device_ambiguous 5:failed:device:device_not_found 6:failed:lat:out_of_range"
	if err != nil || rep.Created != 2 || reasons(rep) != want {
		t.Fatalf("%+v %v\n%s", rep, err, reasons(rep))
	}
	rep, err = Import(e.ctx, e.owner, path, "", Spec{Kind: KindCoordinates, Partial: true})
	if err != nil || rep.Created != 2 || !rep.Committed {
		t.Fatalf("%+v %v", rep, err)
	}
	d, err := monitoring.GetDevice(e.ctx, e.owner, "nas", e.scalar(`SELECT id FROM nas WHERE ip = '10.9.0.1'`))
	if err != nil || d.Lat == nil || *d.Lat != 33.3 || *d.Lon != 44.4 {
		t.Fatalf("%+v %v", d, err)
	}
	// Re-run: located devices are the duplicates.
	fix := e.file("fix.csv", "device,kind,lat,lon\ncore-1,nas,10,20\n")
	rep, err = Import(e.ctx, e.owner, fix, "", Spec{Kind: KindCoordinates})
	if err != nil || reasons(rep) != "2:failed:device:coordinates_set" {
		t.Fatalf("%+v %v", rep, err)
	}
	if rep, err := Import(e.ctx, e.owner, fix, "", Spec{Kind: KindCoordinates, OnDuplicate: "skip"}); err != nil || rep.Skipped != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	if rep, err := Import(e.ctx, e.owner, fix, "", Spec{Kind: KindCoordinates, OnDuplicate: "update"}); err != nil || rep.Updated != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	d, _ = monitoring.GetDevice(e.ctx, e.owner, "nas", d.Ref)
	if *d.Lat != 10 || *d.Lon != 20 {
		t.Fatalf("%+v", d)
	}
}

// A job of a row kind commits in chunks and resumes from its checkpoint.
func TestImportManagersJobChunks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	SetChunkRows(e.a, 2)
	var b strings.Builder
	b.WriteString("username,password,balance\n")
	for i := range 5 {
		b.WriteString("m" + itoa(i) + ",Mgr-pass-2026,1\n")
	}
	j, err := CreateJob(e.ctx, e.owner, "m.csv", strings.NewReader(b.String()), Spec{Kind: KindManagers})
	if err != nil {
		t.Fatal(err)
	}
	e.runJob(*j.JobID)
	got, err := GetJob(e.ctx, e.owner, j.ID)
	if err != nil || got.State != "done" || got.Created != 5 || got.RowsDone != 5 || got.Kind != KindManagers {
		t.Fatalf("%+v %v", got, err)
	}
	if n := e.scalar(`SELECT sum(balance) FROM managers`); n != 5000 {
		t.Fatalf("balances %d", n)
	}
	_, err = CreateJob(e.ctx, e.owner, "m.csv", strings.NewReader("foo\nx\n"), Spec{Kind: KindManagers})
	xrtest.WantReason(t, err, 400, "mapping_required")
}

// A managers job cancelled after its first chunk keeps what it committed;
// resumed after a crash it goes on from the checkpoint without moving a
// balance twice.
func TestImportManagersJobCancelAndResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	SetChunkRows(e.a, 2)
	var b strings.Builder
	b.WriteString("username,password,balance\n")
	for i := range 5 {
		b.WriteString("c" + itoa(i) + ",Mgr-pass-2026,1\n")
	}
	j, err := CreateJob(e.ctx, e.owner, "m.csv", strings.NewReader(b.String()), Spec{Kind: KindManagers})
	if err != nil {
		t.Fatal(err)
	}
	xrtest.Exec(t, e.ten, `UPDATE import_runs SET state = 'running' WHERE id = ?`, j.ID)
	if _, err := CancelJob(e.ctx, e.owner, j.ID); err != nil {
		t.Fatal(err)
	}
	job, err := app.GetJob(e.ctx, e.ten.DB.R, *j.JobID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runDataOnce(e.ctx, &app.JobContext{Tenant: e.ten, Job: job}); err != nil {
		t.Fatal(err)
	}
	got, err := GetJob(e.ctx, e.owner, j.ID)
	if err != nil || got.State != "cancelled" || got.Created != 2 || got.RowsDone != 2 || e.scalar(`SELECT count(*) FROM managers`) != 3 {
		t.Fatalf("cancelled: %+v %v", got, err)
	}
	xrtest.Exec(t, e.ten, `UPDATE import_runs SET state = 'running', cancel_requested = 0, finished_at = NULL WHERE id = ?`, j.ID)
	if _, err := runData(e.ctx, &app.JobContext{Tenant: e.ten, Job: job}); err != nil {
		t.Fatal(err)
	}
	got, err = GetJob(e.ctx, e.owner, j.ID)
	if err != nil || got.State != "done" || got.Created != 5 || got.RowsDone != 5 {
		t.Fatalf("resumed: %+v %v", got, err)
	}
	if n := e.scalar(`SELECT sum(balance) FROM managers`); n != 5000 {
		t.Fatalf("balances %d", n)
	}
	if n := e.scalar(`SELECT count(*) FROM manager_journal WHERE kind = 'opening_balance'`); n != 5 {
		t.Fatalf("journal %d", n)
	}
}
