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
// addresses in Metadata and FindCoordinator answers to itself, so that every
// connection the client opens goes through it. One broker only (the test
// brokers have one).
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
	// lost are the keys whose requests are never forwarded (holdForever),
	// held those requests, decoded; done is closed when the proxy closes.
	lost      map[int16]bool
	held      []kmsg.Request
	done      chan struct{}
	closeOnce sync.Once
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
		hold: map[int16]func(){}, sent: map[int16]int{}, lost: map[int16]bool{}, done: make(chan struct{})}
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

// holdForever makes every later request of key stay on the wire, never
// forwarded, the request lost between client and broker. The connection's
// requests after it wait behind it, as they would on a real socket; its
// goroutine ends when the proxy closes.
func (p *kproxy) holdForever(key kmsg.Key) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lost[int16(key)] = true
}

// heldRequests are the requests of key holdForever keeps, decoded (a request
// that would not decode keeps its zero fields and is logged).
func (p *kproxy) heldRequests(key kmsg.Key) []kmsg.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []kmsg.Request
	for _, r := range p.held {
		if r.Key() == int16(key) {
			out = append(out, r)
		}
	}
	return out
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
	p.closeOnce.Do(func() { close(p.done) })
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
		hold, lost := p.hold[k.key], p.lost[k.key]
		if lost {
			p.held = append(p.held, p.decodeRequest(k, b))
		}
		p.mu.Unlock()
		if lost {
			<-p.done
			return
		}
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

// decodeRequest decodes a request frame: header v1 (key, version,
// correlation id, nullable client id), v2 adding tagged fields, then the body.
func (p *kproxy) decodeRequest(k reqKey, frame []byte) kmsg.Request {
	req := kmsg.RequestForKey(k.key)
	if req == nil {
		p.t.Logf("proxy: no request of key %d to decode", k.key)
		return &kmsg.ApiVersionsRequest{}
	}
	req.SetVersion(k.version)
	head := 8
	if len(frame) < head+2 {
		p.t.Logf("proxy: request of key %d v%d too short", k.key, k.version)
		return req
	}
	if n := int16(binary.BigEndian.Uint16(frame[head:])); n > 0 {
		head += int(n)
	}
	head += 2
	if req.IsFlexible() {
		n, l := binary.Uvarint(frame[min(head, len(frame)):])
		if l <= 0 {
			p.t.Logf("proxy: request of key %d v%d: bad tagged fields", k.key, k.version)
			return req
		}
		head += l
		for range n {
			_, l1 := binary.Uvarint(frame[min(head, len(frame)):])
			size, l2 := binary.Uvarint(frame[min(head+max(l1, 0), len(frame)):])
			if l1 <= 0 || l2 <= 0 {
				p.t.Logf("proxy: request of key %d v%d: bad tagged fields", k.key, k.version)
				return req
			}
			head += l1 + l2 + int(size)
		}
	}
	if head > len(frame) {
		p.t.Logf("proxy: request of key %d v%d: header longer than the frame", k.key, k.version)
		return req
	}
	if err := req.ReadFrom(frame[head:]); err != nil {
		p.t.Logf("proxy: cannot decode a request of key %d v%d: %v", k.key, k.version, err)
	}
	return req
}

// inspect records the answer to an InitProducerId and points the brokers of
// a Metadata answer and the coordinators of a FindCoordinator answer at the
// proxy; anything it cannot decode passes unchanged.
func (p *kproxy) inspect(k reqKey, frame []byte) []byte {
	if k.key != int16(kmsg.Metadata) && k.key != int16(kmsg.InitProducerID) && k.key != int16(kmsg.FindCoordinator) {
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
	case *kmsg.FindCoordinatorResponse:
		// A Java client connects to its coordinator at the address this
		// answer gives (franz-go looks the node id up in its metadata
		// instead): left alone, a Java producer's transactional requests,
		// and its produce requests to the same node, would bypass the proxy.
		if r.ErrorCode == 0 && r.Host != "" { // v0-v3
			r.Host, r.Port = "127.0.0.1", p.port
		}
		for i := range r.Coordinators { // v4+
			if c := &r.Coordinators[i]; c.ErrorCode == 0 && c.Host != "" {
				c.Host, c.Port = "127.0.0.1", p.port
			}
		}
		return r.AppendTo(append([]byte(nil), frame[:head]...))
	}
	return frame
}
