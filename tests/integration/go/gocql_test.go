// Go driver (gocql, Debian's golang-github-gocql-gocql-dev) against a
// running server: CASSETTE_CONTACT=host:port, set by tests/run_integration.sh
// (which starts the server) or pointing at Apache Cassandra.  The session is
// configured as the README's Go snippet (protocol v4, token-aware over
// DC-aware round robin on datacenter1).
package gocqltest

import (
	"errors"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

func session(t *testing.T) *gocql.Session {
	t.Helper()
	contact := os.Getenv("CASSETTE_CONTACT")
	if contact == "" {
		t.Skip("CASSETTE_CONTACT not set")
	}
	host, port, err := net.SplitHostPort(contact)
	if err != nil {
		t.Fatalf("CASSETTE_CONTACT %q: %v", contact, err)
	}
	cluster := gocql.NewCluster(host)
	cluster.Port, _ = strconv.Atoi(port)
	cluster.ProtoVersion = 4
	cluster.Timeout = 10 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	cluster.PoolConfig.HostSelectionPolicy =
		gocql.TokenAwareHostPolicy(gocql.DCAwareRoundRobinPolicy("datacenter1"))
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func exec(t *testing.T, s *gocql.Session, q string, args ...interface{}) {
	t.Helper()
	if err := s.Query(q, args...).Exec(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// A session with keyspace go_ks and the tables of ddl created.
func sessionWith(t *testing.T, ddl ...string) *gocql.Session {
	t.Helper()
	s := session(t)
	exec(t, s, "CREATE KEYSPACE IF NOT EXISTS go_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	for _, q := range ddl {
		exec(t, s, q)
	}
	return s
}

// Snappy body compression (gocql.SnappyCompressor), as Cassandra 4.1 takes
// it on protocol v4: a session with it writes and reads values big enough
// to be compressed both ways.
func TestSnappyCompression(t *testing.T) {
	contact := os.Getenv("CASSETTE_CONTACT")
	if contact == "" {
		t.Skip("CASSETTE_CONTACT not set")
	}
	host, port, _ := net.SplitHostPort(contact)
	cluster := gocql.NewCluster(host)
	cluster.Port, _ = strconv.Atoi(port)
	cluster.ProtoVersion = 4
	cluster.Timeout = 10 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	cluster.Compressor = gocql.SnappyCompressor{}
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("CreateSession with snappy: %v", err)
	}
	defer s.Close()
	exec(t, s, "CREATE KEYSPACE IF NOT EXISTS go_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	exec(t, s, "CREATE TABLE IF NOT EXISTS go_ks.snappy (k int PRIMARY KEY, v text)")
	big := strings.Repeat("snappy-", 30000)
	for k := 0; k < 10; k++ {
		exec(t, s, "INSERT INTO go_ks.snappy (k, v) VALUES (?, ?)", k, big[k:])
	}
	iter := s.Query("SELECT k, v FROM go_ks.snappy").Iter()
	var k int
	var v string
	n := 0
	for iter.Scan(&k, &v) {
		if v != big[k:] {
			t.Fatalf("k %d: %d bytes back, want %d", k, len(v), len(big[k:]))
		}
		n++
	}
	if err := iter.Close(); err != nil || n != 10 {
		t.Fatalf("%d rows, %v", n, err)
	}
}

func TestConnectAndSystemLocal(t *testing.T) {
	s := session(t)
	var version, dc string
	if err := s.Query("SELECT release_version, data_center FROM system.local").Scan(&version, &dc); err != nil {
		t.Fatal(err)
	}
	if version == "" || dc != "datacenter1" {
		t.Fatalf("release_version %q, data_center %q", version, dc)
	}
}

func TestTypesRoundTrip(t *testing.T) {
	s := sessionWith(t, `CREATE TABLE IF NOT EXISTS go_ks.types (id int PRIMARY KEY, t text, b bigint, d double,
		ts timestamp, u uuid, tu timeuuid, bl blob, ok boolean, l list<int>, m map<text, int>, st set<text>)`)
	u := gocql.TimeUUID()
	id := gocql.MustRandomUUID()
	ts := time.Date(2026, 11, 21, 10, 30, 0, 123000000, time.UTC)
	exec(t, s, `INSERT INTO go_ks.types (id, t, b, d, ts, u, tu, bl, ok, l, m, st) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		1, "héllo", int64(1)<<40, 2.5, ts, id, u, []byte{0, 1, 2}, true, []int{3, 1, 2},
		map[string]int{"a": 1, "b": 2}, []string{"y", "x"})
	var (
		txt string
		b   int64
		d   float64
		gts time.Time
		gid gocql.UUID
		gtu gocql.UUID
		bl  []byte
		ok  bool
		l   []int
		m   map[string]int
		st  []string
	)
	if err := s.Query(`SELECT t, b, d, ts, u, tu, bl, ok, l, m, st FROM go_ks.types WHERE id = ?`, 1).
		Scan(&txt, &b, &d, &gts, &gid, &gtu, &bl, &ok, &l, &m, &st); err != nil {
		t.Fatal(err)
	}
	if txt != "héllo" || b != int64(1)<<40 || d != 2.5 || !gts.Equal(ts) || gid != id || gtu != u ||
		string(bl) != "\x00\x01\x02" || !ok {
		t.Fatalf("scalars: %q %d %v %v %v %v %v %v", txt, b, d, gts, gid, gtu, bl, ok)
	}
	if len(l) != 3 || l[0] != 3 || l[1] != 1 || l[2] != 2 {
		t.Fatalf("list %v", l)
	}
	if len(m) != 2 || m["a"] != 1 || m["b"] != 2 {
		t.Fatalf("map %v", m)
	}
	if len(st) != 2 || st[0] != "x" || st[1] != "y" { // sets come back sorted
		t.Fatalf("set %v", st)
	}
}

func TestClusteringOrderAndPaging(t *testing.T) {
	s := sessionWith(t, "CREATE TABLE IF NOT EXISTS go_ks.ts (p text, c int, v text, PRIMARY KEY (p, c)) WITH CLUSTERING ORDER BY (c DESC)")
	b := s.NewBatch(gocql.UnloggedBatch)
	for i := 0; i < 250; i++ {
		b.Query("INSERT INTO go_ks.ts (p, c, v) VALUES (?, ?, ?)", "day1", i, "v"+strconv.Itoa(i))
	}
	if err := s.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	iter := s.Query("SELECT c FROM go_ks.ts WHERE p = ?", "day1").PageSize(40).Iter()
	var c, n, prev int
	prev = 1 << 30
	for iter.Scan(&c) {
		if c >= prev {
			t.Fatalf("row %d: c=%d after %d (want descending)", n, c, prev)
		}
		prev = c
		n++
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if n != 250 {
		t.Fatalf("%d rows through paging, want 250", n)
	}
	var cnt int64
	if err := s.Query("SELECT count(*) FROM go_ks.ts WHERE p = ? AND c >= 100 AND c < 110", "day1").Scan(&cnt); err != nil || cnt != 10 {
		t.Fatalf("slice count %d, %v", cnt, err)
	}
}

func TestCountersAndLWT(t *testing.T) {
	s := sessionWith(t, "CREATE TABLE IF NOT EXISTS go_ks.cnt (k text PRIMARY KEY, n counter)")
	for i := 0; i < 5; i++ {
		exec(t, s, "UPDATE go_ks.cnt SET n = n + ? WHERE k = ?", int64(2), "likes")
	}
	var n int64
	if err := s.Query("SELECT n FROM go_ks.cnt WHERE k = ?", "likes").Scan(&n); err != nil || n != 10 {
		t.Fatalf("counter %d, %v", n, err)
	}
	exec(t, s, "CREATE TABLE IF NOT EXISTS go_ks.users (name text PRIMARY KEY, email text)")
	applied, err := s.Query("INSERT INTO go_ks.users (name, email) VALUES (?, ?) IF NOT EXISTS", "ann", "a@x").
		MapScanCAS(map[string]interface{}{})
	if err != nil || !applied {
		t.Fatalf("first IF NOT EXISTS: applied %v, %v", applied, err)
	}
	prev := map[string]interface{}{}
	applied, err = s.Query("INSERT INTO go_ks.users (name, email) VALUES (?, ?) IF NOT EXISTS", "ann", "b@x").
		MapScanCAS(prev)
	if err != nil || applied || prev["email"] != "a@x" {
		t.Fatalf("second IF NOT EXISTS: applied %v, existing %v, %v", applied, prev, err)
	}
}

func TestErrorsAreTyped(t *testing.T) {
	s := session(t)
	err := s.Query("SELEC * FROM system.local").Exec()
	var re gocql.RequestError
	if !errors.As(err, &re) || re.Code() != gocql.ErrCodeSyntax {
		t.Fatalf("syntax error: %T %v", err, err)
	}
	err = s.Query("SELECT * FROM go_ks.no_such_table").Exec()
	if !errors.As(err, &re) || re.Code() != gocql.ErrCodeInvalid || !strings.Contains(re.Message(), "no_such_table") {
		t.Fatalf("unknown table: %T %v", err, err)
	}
}

func TestSchemaMetadata(t *testing.T) {
	s := sessionWith(t, "CREATE TABLE IF NOT EXISTS go_ks.meta (a int, b text, c int, PRIMARY KEY ((a), b))")
	km, err := s.KeyspaceMetadata("go_ks")
	if err != nil {
		t.Fatal(err)
	}
	tm, ok := km.Tables["meta"]
	if !ok {
		names := []string{}
		for n := range km.Tables {
			names = append(names, n)
		}
		sort.Strings(names)
		t.Fatalf("table meta missing from %v", names)
	}
	if len(tm.PartitionKey) != 1 || tm.PartitionKey[0].Name != "a" ||
		len(tm.ClusteringColumns) != 1 || tm.ClusteringColumns[0].Name != "b" {
		t.Fatalf("keys: %+v %+v", tm.PartitionKey, tm.ClusteringColumns)
	}
}
