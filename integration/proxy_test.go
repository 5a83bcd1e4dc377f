package integration

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// kproxy stands between txnscope's client and the real broker, so a test can
// count the requests that reach the broker, read the broker's answers, and
// hold one request on the wire: the network delay during which a transaction
// can turn over after txnscope's last re-read. It rewrites the brokers'
// addresses in Metadata answers to itself, so that every connection the
// client opens goes through it. One broker only (the test brokers have one).
type kproxy struct {
	t      *testing.T
	ln     net.Listener
	target string
	port   int32

	mu sync.Mutex
	// hold, when set, is called before a request of its key is forwarded,
	// on that connection's goroutine: it may block.
	hold    map[int16]func()
	sent    map[int16]int
	answers []proxyAnswer
	conns   []net.Conn
}

// proxyAnswer is the error code of one answer the broker gave to a request
// the test watches.
type proxyAnswer struct {
	key  int16
	code int16
}

func newProxy(t *testing.T, target string) *kproxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &kproxy{t: t, ln: ln, target: target, port: int32(ln.Addr().(*net.TCPAddr).Port),
		hold: map[int16]func(){}, sent: map[int16]int{}}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

// addr is the bootstrap address to give txnscope.
func (p *kproxy) addr() string { return "127.0.0.1:" + strconv.Itoa(int(p.port)) }

// onRequest makes every later request of key wait for f first.
func (p *kproxy) onRequest(key kmsg.Key, f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold[int16(key)] = f
}

// count is how many requests of key reached the broker.
func (p *kproxy) count(key kmsg.Key) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent[int16(key)]
}

// codes are the error codes of the broker's answers to requests of key, in order.
func (p *kproxy) codes(key kmsg.Key) []int16 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int16
	for _, a := range p.answers {
		if a.key == int16(key) {
			out = append(out, a.code)
		}
	}
	return out
}

func (p *kproxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

func (p *kproxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		broker, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, broker)
		p.mu.Unlock()
		pending := &inflight{m: map[int32]reqKey{}}
		go p.requests(client, broker, pending)
		go p.responses(broker, client, pending)
	}
}

type reqKey struct{ key, version int16 }

// inflight maps a connection's correlation ids to what they asked.
type inflight struct {
	mu sync.Mutex
	m  map[int32]reqKey
}

func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 64<<20 {
		return nil, errors.New("frame too large")
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

func writeFrame(w io.Writer, b []byte) error {
	out := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b)))
	_, err := w.Write(append(out, b...))
	return err
}

func (p *kproxy) requests(client, broker net.Conn, pending *inflight) {
	defer broker.Close()
	for {
		b, err := readFrame(client)
		if err != nil || len(b) < 8 {
			return
		}
		k := reqKey{int16(binary.BigEndian.Uint16(b)), int16(binary.BigEndian.Uint16(b[2:]))}
		corr := int32(binary.BigEndian.Uint32(b[4:]))
		pending.mu.Lock()
		pending.m[corr] = k
		pending.mu.Unlock()
		p.mu.Lock()
		hold := p.hold[k.key]
		p.mu.Unlock()
		if hold != nil {
			hold()
		}
		p.mu.Lock()
		p.sent[k.key]++
		p.mu.Unlock()
		if writeFrame(broker, b) != nil {
			return
		}
	}
}

func (p *kproxy) responses(broker, client net.Conn, pending *inflight) {
	defer client.Close()
	for {
		b, err := readFrame(broker)
		if err != nil || len(b) < 4 {
			return
		}
		corr := int32(binary.BigEndian.Uint32(b))
		pending.mu.Lock()
		k, ok := pending.m[corr]
		delete(pending.m, corr)
		pending.mu.Unlock()
		if ok {
			b = p.inspect(k, b)
		}
		if writeFrame(client, b) != nil {
			return
		}
	}
}

// inspect records the answer to an InitProducerId and points the brokers of
// a Metadata answer at the proxy; anything it cannot decode passes unchanged.
func (p *kproxy) inspect(k reqKey, frame []byte) []byte {
	if k.key != int16(kmsg.Metadata) && k.key != int16(kmsg.InitProducerID) {
		return frame
	}
	resp := kmsg.ResponseForKey(k.key)
	resp.SetVersion(k.version)
	head := 4
	if resp.IsFlexible() { // response header v1: tagged fields after the correlation id
		n, l := binary.Uvarint(frame[head:])
		if l <= 0 {
			return frame
		}
		head += l
		for range n {
			_, l1 := binary.Uvarint(frame[head:])
			size, l2 := binary.Uvarint(frame[head+l1:])
			if l1 <= 0 || l2 <= 0 {
				return frame
			}
			head += l1 + l2 + int(size)
		}
	}
	if err := resp.ReadFrom(frame[head:]); err != nil {
		p.t.Logf("proxy: cannot decode the answer to key %d v%d: %v", k.key, k.version, err)
		return frame
	}
	switch r := resp.(type) {
	case *kmsg.InitProducerIDResponse:
		p.mu.Lock()
		p.answers = append(p.answers, proxyAnswer{k.key, r.ErrorCode})
		p.mu.Unlock()
		return frame
	case *kmsg.MetadataResponse:
		for i := range r.Brokers {
			r.Brokers[i].Host, r.Brokers[i].Port = "127.0.0.1", p.port
		}
		return r.AppendTo(append([]byte(nil), frame[:head]...))
	}
	return frame
}
