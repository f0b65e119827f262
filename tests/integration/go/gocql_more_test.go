// More of what Go applications do with gocql: UDTs and tuples, the time and
// number types, paging by saved state, conditional batches, client-side
// timestamps, tracing, typed errors, and the schema metadata gocql
// refreshes from schema change events.  Same session set-up as
// gocql_test.go (CASSETTE_CONTACT).
package gocqltest

import (
	"bytes"
	"errors"
	"math/big"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"gopkg.in/inf.v0"
)

type address struct {
	Street string `cql:"street"`
	Zip    int    `cql:"zip"`
}

func TestUDTsAndTuples(t *testing.T) {
	s := sessionWith(t,
		"CREATE TYPE IF NOT EXISTS go_ks.address (street text, zip int)",
		`CREATE TABLE IF NOT EXISTS go_ks.people (id int PRIMARY KEY, home frozen<address>,
			others list<frozen<address>>, pair tuple<int, text>)`)
	// The tuple as a literal: this gocql counts a tuple column's elements as
	// bind values but marshals the tuple as one, so a bound tuple fails
	// on the client whatever the server.
	exec(t, s, "INSERT INTO go_ks.people (id, home, others, pair) VALUES (?, ?, ?, (7, 'seven'))", 1,
		address{"Main St", 12345},
		[]map[string]interface{}{{"street": "Side St", "zip": 1}, {"street": "Back St", "zip": 2}})
	var (
		home   address
		others []map[string]interface{}
		n      int
		word   string
	)
	if err := s.Query("SELECT home, others, pair FROM go_ks.people WHERE id = ?", 1).
		Scan(&home, &others, &n, &word); err != nil {
		t.Fatal(err)
	}
	if home != (address{"Main St", 12345}) {
		t.Fatalf("home %+v", home)
	}
	if len(others) != 2 || others[0]["street"] != "Side St" || others[1]["zip"] != 2 {
		t.Fatalf("others %v", others)
	}
	if n != 7 || word != "seven" {
		t.Fatalf("tuple (%d, %q)", n, word)
	}
	// A UDT field read on its own, and a null UDT.
	var street string
	if err := s.Query("SELECT home.street FROM go_ks.people WHERE id = ?", 1).Scan(&street); err != nil || street != "Main St" {
		t.Fatalf("home.street %q, %v", street, err)
	}
	exec(t, s, "INSERT INTO go_ks.people (id) VALUES (?)", 2)
	var none map[string]interface{}
	if err := s.Query("SELECT home FROM go_ks.people WHERE id = ?", 2).Scan(&none); err != nil || len(none) != 0 {
		t.Fatalf("null home %v, %v", none, err)
	}
}

func TestTimeAndNumberTypes(t *testing.T) {
	s := sessionWith(t, `CREATE TABLE IF NOT EXISTS go_ks.kinds (id int PRIMARY KEY, dt date, tm time, du duration,
		ip inet, dec decimal, vi varint, si smallint, ti tinyint, f float)`)
	day := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	tod := 13*time.Hour + 45*time.Minute + 30*time.Second + 250*time.Millisecond
	dur := gocql.Duration{Months: 1, Days: 2, Nanoseconds: int64(3 * time.Hour)}
	dec := inf.NewDec(150, 2) // 1.50: the scale is kept
	vi, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	exec(t, s, "INSERT INTO go_ks.kinds (id, dt, tm, du, ip, dec, vi, si, ti, f) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		1, day, tod, dur, net.ParseIP("2001:db8::1"), dec, vi, int16(-300), int8(-7), float32(1.25))
	var (
		gday time.Time
		gtod time.Duration
		gdur gocql.Duration
		gip  net.IP
		gdec *inf.Dec
		gvi  *big.Int
		gsi  int16
		gti  int8
		gf   float32
	)
	if err := s.Query("SELECT dt, tm, du, ip, dec, vi, si, ti, f FROM go_ks.kinds WHERE id = ?", 1).
		Scan(&gday, &gtod, &gdur, &gip, &gdec, &gvi, &gsi, &gti, &gf); err != nil {
		t.Fatal(err)
	}
	if !gday.Equal(day) || gtod != tod || gdur != dur || !gip.Equal(net.ParseIP("2001:db8::1")) {
		t.Fatalf("date %v, time %v, duration %+v, inet %v", gday, gtod, gdur, gip)
	}
	if gdec.String() != "1.50" || gvi.Cmp(vi) != 0 || gsi != -300 || gti != -7 || gf != 1.25 {
		t.Fatalf("decimal %v, varint %v, smallint %d, tinyint %d, float %v", gdec, gvi, gsi, gti, gf)
	}
	// The server's own conversion functions on them.
	var asText string
	if err := s.Query("SELECT CAST(dec AS text) FROM go_ks.kinds WHERE id = ?", 1).Scan(&asText); err != nil || asText != "1.50" {
		t.Fatalf("CAST(dec AS text) %q, %v", asText, err)
	}
}

func TestPagingBySavedState(t *testing.T) {
	s := sessionWith(t, "CREATE TABLE IF NOT EXISTS go_ks.feed (u text, seq int, PRIMARY KEY (u, seq))")
	for i := 0; i < 25; i++ {
		exec(t, s, "INSERT INTO go_ks.feed (u, seq) VALUES (?, ?)", "ann", i)
	}
	// A web handler's pattern: one page per request, the state handed back
	// to the client and sent again with the next request.
	var state []byte
	var got []int
	for page := 0; page < 10; page++ {
		iter := s.Query("SELECT seq FROM go_ks.feed WHERE u = ?", "ann").PageSize(10).PageState(state).Iter()
		var seq, rows int
		for rows < iter.NumRows() && iter.Scan(&seq) {
			got = append(got, seq)
			rows++
		}
		state = iter.PageState()
		if err := iter.Close(); err != nil {
			t.Fatal(err)
		}
		if len(state) == 0 {
			break
		}
	}
	if len(got) != 25 {
		t.Fatalf("%d rows over saved-state pages, want 25: %v", len(got), got)
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("row %d is seq %d: %v", i, v, got)
		}
	}
}

func TestConditionalBatch(t *testing.T) {
	s := sessionWith(t, `CREATE TABLE IF NOT EXISTS go_ks.acct (pk text, ck text, version int, value text,
		PRIMARY KEY (pk, ck))`)
	exec(t, s, "INSERT INTO go_ks.acct (pk, ck, version, value) VALUES (?, ?, ?, ?)", "p", "a", 1, "x")
	exec(t, s, "INSERT INTO go_ks.acct (pk, ck, version, value) VALUES (?, ?, ?, ?)", "p", "b", 1, "y")
	batch := func(bVersion int) *gocql.Batch {
		b := s.NewBatch(gocql.LoggedBatch)
		b.Query("UPDATE go_ks.acct SET value = ?, version = ? WHERE pk = ? AND ck = ? IF version = ?", "x2", 2, "p", "a", 1)
		b.Query("UPDATE go_ks.acct SET value = ?, version = ? WHERE pk = ? AND ck = ? IF version = ?", "y2", 2, "p", "b", bVersion)
		return b
	}
	// One condition fails: nothing is applied, and the current rows come back.
	m := map[string]interface{}{}
	applied, iter, err := s.MapExecuteBatchCAS(batch(5), m)
	if err != nil {
		t.Fatal(err)
	}
	if applied {
		t.Fatal("batch applied although version of b is 1, not 5")
	}
	versions := map[string]int{fmtRow(m): 0}
	for m = map[string]interface{}{}; iter.MapScan(m); m = map[string]interface{}{} {
		versions[fmtRow(m)] = 0
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := versions["a:1"]; !ok {
		t.Fatalf("existing rows %v, want a at version 1", versions)
	}
	var value string
	if err := s.Query("SELECT value FROM go_ks.acct WHERE pk = ? AND ck = ?", "p", "a").Scan(&value); err != nil || value != "x" {
		t.Fatalf("a after the refused batch: %q, %v", value, err)
	}
	// Both conditions hold: both updates are applied together.
	applied, _, err = s.ExecuteBatchCAS(batch(1))
	if err != nil || !applied {
		t.Fatalf("second batch applied %v, %v", applied, err)
	}
	for ck, want := range map[string]string{"a": "x2", "b": "y2"} {
		if err := s.Query("SELECT value FROM go_ks.acct WHERE pk = ? AND ck = ?", "p", ck).Scan(&value); err != nil || value != want {
			t.Fatalf("%s: %q, %v (want %q)", ck, value, err, want)
		}
	}
}

func fmtRow(m map[string]interface{}) string {
	ck, _ := m["ck"].(string)
	v, _ := m["version"].(int)
	return ck + ":" + strconv.Itoa(v)
}

func TestClientTimestampsAndTTL(t *testing.T) {
	s := sessionWith(t, "CREATE TABLE IF NOT EXISTS go_ks.stamps (k int PRIMARY KEY, v text)")
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano() / 1000
	if err := s.Query("INSERT INTO go_ks.stamps (k, v) VALUES (?, ?)", 1, "old").WithTimestamp(ts).Exec(); err != nil {
		t.Fatal(err)
	}
	// An older write loses to it, whatever the order they arrive in.
	if err := s.Query("INSERT INTO go_ks.stamps (k, v) VALUES (?, ?)", 1, "older").WithTimestamp(ts - 1).Exec(); err != nil {
		t.Fatal(err)
	}
	var v string
	var wt int64
	if err := s.Query("SELECT v, WRITETIME(v) FROM go_ks.stamps WHERE k = ?", 1).Scan(&v, &wt); err != nil {
		t.Fatal(err)
	}
	if v != "old" || wt != ts {
		t.Fatalf("v %q writetime %d, want %q %d", v, wt, "old", ts)
	}
	exec(t, s, "INSERT INTO go_ks.stamps (k, v) VALUES (?, ?) USING TTL ?", 2, "short", 300)
	var ttl int
	if err := s.Query("SELECT TTL(v) FROM go_ks.stamps WHERE k = ?", 2).Scan(&ttl); err != nil || ttl <= 0 || ttl > 300 {
		t.Fatalf("ttl %d, %v", ttl, err)
	}
}

func TestTracing(t *testing.T) {
	s := sessionWith(t, "CREATE TABLE IF NOT EXISTS go_ks.traced (k int PRIMARY KEY, v int)")
	var out bytes.Buffer
	if err := s.Query("INSERT INTO go_ks.traced (k, v) VALUES (?, ?)", 1, 2).Trace(gocql.NewTraceWriter(s, &out)).Exec(); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !strings.Contains(text, "Tracing session") || !strings.Contains(text, "coordinator: 127.0.0.1") ||
		strings.Contains(text, "Error:") || strings.Count(text, "\n") < 3 {
		t.Fatalf("trace output:\n%s", text)
	}
}

func TestMoreTypedErrors(t *testing.T) {
	s := sessionWith(t, "CREATE TABLE IF NOT EXISTS go_ks.dup (k int PRIMARY KEY)")
	err := s.Query("CREATE TABLE go_ks.dup (k int PRIMARY KEY)").Exec()
	var ae *gocql.RequestErrAlreadyExists
	if !errors.As(err, &ae) || ae.Keyspace != "go_ks" || ae.Table != "dup" {
		t.Fatalf("CREATE TABLE twice: %T %v", err, err)
	}
	var re gocql.RequestError
	err = s.Query("INSERT INTO go_ks.dup (k) VALUES ('one')").Exec()
	if !errors.As(err, &re) || re.Code() != gocql.ErrCodeInvalid || !strings.Contains(re.Message(), "Invalid STRING constant") {
		t.Fatalf("text for an int: %T %v", err, err)
	}
	// A slice on the partition key: Cassandra 4.1 filters it in a SELECT and
	// refuses it in a DELETE.
	err = s.Query("SELECT * FROM go_ks.dup WHERE k > 1").Exec()
	if !errors.As(err, &re) || re.Code() != gocql.ErrCodeInvalid || !strings.Contains(re.Message(), "ALLOW FILTERING") {
		t.Fatalf("range on the partition key: %T %v", err, err)
	}
	if err := s.Query("SELECT * FROM go_ks.dup WHERE k > 1 ALLOW FILTERING").Exec(); err != nil {
		t.Fatalf("range on the partition key, ALLOW FILTERING: %v", err)
	}
	err = s.Query("DELETE FROM go_ks.dup WHERE k > 1").Exec()
	if !errors.As(err, &re) || re.Code() != gocql.ErrCodeInvalid ||
		re.Message() != "Only EQ and IN relation are supported on the partition key (unless you use the token() function) for DELETE statements" {
		t.Fatalf("DELETE over a partition key range: %T %v", err, err)
	}
}

func TestSchemaChangesReachMetadata(t *testing.T) {
	s := sessionWith(t, "CREATE TABLE IF NOT EXISTS go_ks.evolving (k int PRIMARY KEY, a text)")
	if _, err := s.KeyspaceMetadata("go_ks"); err != nil {
		t.Fatal(err)
	}
	exec(t, s, "ALTER TABLE go_ks.evolving ADD b int")
	// gocql refreshes its metadata when the server pushes the schema change.
	deadline := time.Now().Add(10 * time.Second)
	for {
		km, err := s.KeyspaceMetadata("go_ks")
		if err != nil {
			t.Fatal(err)
		}
		if tm, ok := km.Tables["evolving"]; ok {
			if _, ok := tm.Columns["b"]; ok {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("column b never reached the keyspace metadata")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The new column is usable at once through a prepared statement.
	exec(t, s, "INSERT INTO go_ks.evolving (k, a, b) VALUES (?, ?, ?)", 1, "x", 2)
	var b int
	if err := s.Query("SELECT b FROM go_ks.evolving WHERE k = ?", 1).Scan(&b); err != nil || b != 2 {
		t.Fatalf("b %d, %v", b, err)
	}
}
