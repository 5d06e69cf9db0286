package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/storage/wal"
)

// Errors of cluster membership changes.
var (
	// ErrMemberNotFound: no member has the name.
	ErrMemberNotFound = errors.New("no such etcd member")
	// ErrMemberExists: a started member already has the name or peer URLs of one being added.
	ErrMemberExists = errors.New("etcd member exists")
	// ErrNotClustered: the embedded etcd is a single member, which nobody can join.
	ErrNotClustered = errors.New("the embedded etcd is not a cluster member")
)

// DefaultPromoteInterval is how often the leader of a cluster promotes the learners that
// have caught up with it.
const DefaultPromoteInterval = 500 * time.Millisecond

// ClusterConfig makes the embedded etcd a member of a cluster others may join (see
// WithCluster). Its peer listener is https on AdvertiseHost:PeerPort, its client listener
// https on AdvertiseHost:ClientPort and on the loopback address; both require a
// certificate of the cluster's etcd CA.
type ClusterConfig struct {
	// Name is this member's name, unique in the cluster.
	Name string
	// AdvertiseHost is the IP address peers and clients reach this member at.
	AdvertiseHost string
	// PeerPort and ClientPort are the member's ports (non-zero).
	PeerPort, ClientPort int
	// Join, when set, is the membership of the cluster this member was just added to as a
	// learner (what AddLearner returned on another member, this member included): it
	// starts with initial-cluster-state=existing. Ignored when the data dir holds etcd
	// data already. When empty on a data dir without data, a new cluster of this member
	// alone is made.
	Join []Member
	// PromoteInterval is how often the leader promotes learners that have caught up
	// (0: DefaultPromoteInterval).
	PromoteInterval time.Duration
	// WaitLogInterval is how often a member that does not serve yet (waiting for a quorum
	// of its cluster, or to be promoted from learner) logs what it waits for
	// (0: DefaultWaitLogInterval).
	WaitLogInterval time.Duration
}

// DefaultWaitLogInterval is how often a cluster member that does not serve yet says why.
const DefaultWaitLogInterval = 5 * time.Second

// WithCluster makes the embedded etcd the cluster member c describes instead of a single
// member. A data dir holding a single member's data keeps it: the member's peer URL is
// changed to c's.
func WithCluster(c ClusterConfig) EmbeddedOption {
	return func(conf *embeddedConfig) { conf.cluster = &c }
}

// check reports what makes c unusable.
func (c ClusterConfig) check() error {
	if c.Name == "" {
		return errors.New("cluster member: no name")
	}
	if net.ParseIP(c.AdvertiseHost) == nil {
		return fmt.Errorf("cluster member: advertise address %q is not an IP address", c.AdvertiseHost)
	}
	if c.PeerPort <= 0 || c.ClientPort <= 0 || c.PeerPort == c.ClientPort {
		return fmt.Errorf("cluster member: peer port %d and client port %d must be distinct and set", c.PeerPort, c.ClientPort)
	}
	return nil
}

// PeerURL is the member's advertised peer URL.
func (c ClusterConfig) PeerURL() string { return httpsURL(c.AdvertiseHost, c.PeerPort).String() }

// ClientURL is the member's advertised client URL.
func (c ClusterConfig) ClientURL() string { return httpsURL(c.AdvertiseHost, c.ClientPort).String() }

func httpsURL(host string, port int) *url.URL {
	return &url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.Itoa(port))}
}

// clusterMember is the etcd member c describes, its certificates pki.
func clusterMember(dataDir string, pki embeddedPKI, c ClusterConfig) etcdMember {
	peer, client := *httpsURL(c.AdvertiseHost, c.PeerPort), *httpsURL(c.AdvertiseHost, c.ClientPort)
	listenClient := []url.URL{client}
	if ip := net.ParseIP(c.AdvertiseHost); !ip.IsLoopback() {
		// Loopback first: etcd-endpoints lists it first, for tools on this machine.
		listenClient = []url.URL{*httpsURL("127.0.0.1", c.ClientPort), client}
	}
	m := etcdMember{
		name: c.Name, listenClient: listenClient, advertiseClient: []url.URL{client},
		listenPeer: []url.URL{peer}, advertisePeer: peer, pki: pki,
		initialCluster: c.Name + "=" + peer.String(),
	}
	if len(c.Join) > 0 && !HasEmbeddedData(filepath.Dir(dataDir)) {
		var parts []string
		for _, mem := range c.Join {
			name := mem.Name
			switch {
			case slices.Contains(mem.PeerURLs, peer.String()):
				name = c.Name
			case name == "":
				// A learner that has not started yet: named by its ID, which only has
				// to be unique here.
				name = fmt.Sprintf("%x", mem.ID)
			}
			for _, u := range mem.PeerURLs {
				parts = append(parts, name+"="+u)
			}
		}
		m.initialCluster = strings.Join(parts, ",")
		m.existing = true
	}
	return m
}

// HasEmbeddedData reports whether data dir dir holds an embedded etcd's data (its
// write-ahead log).
func HasEmbeddedData(dir string) bool {
	return wal.Exist(filepath.Join(dir, "etcd", "member", "wal"))
}

// settleMember finishes a cluster member's start.
//  1. Make the member's peer URL the configured one (a single member's data dir becoming a
//     cluster's first member advertised a unix socket nobody listens on).
//  2. Wait until the member votes: a joiner starts as a learner, promoted by the leader once
//     it has caught up (promoteLoop). Until then it cannot serve quotad's reads and writes.
func settleMember(ctx context.Context, e *embed.Etcd, client *clientv3.Client, c ClusterConfig, logger *slog.Logger) error {
	id := uint64(e.Server.MemberID())
	self := e.Server.Cluster().Member(e.Server.MemberID())
	if self == nil {
		return errors.New("the member is not in its own cluster")
	}
	if want := []string{c.PeerURL()}; !slices.Equal(self.PeerURLs, want) {
		if _, err := client.MemberUpdate(ctx, id, want); err != nil {
			return fmt.Errorf("updating the member's peer URLs from %v to %v: %w", self.PeerURLs, want, err)
		}
		logger.Info("embedded etcd member peer URL updated", "name", c.Name, "from", self.PeerURLs, "to", want)
	}
	if !e.Server.IsLearner() {
		return nil
	}
	logger.Info("embedded etcd member is a learner; waiting to be promoted", "name", c.Name)
	// Membership changes are applied in this member's raft loop; each notifies nothing
	// that could be waited on, so the local view is polled.
	ticker := time.NewTicker(50 * time.Millisecond)
	defer ticker.Stop()
	for e.Server.IsLearner() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting to be promoted from learner: %w", ctx.Err())
		case err := <-e.Err():
			return fmt.Errorf("waiting to be promoted from learner: %w", err)
		case <-e.Server.StopNotify():
			return errors.New("waiting to be promoted from learner: the member stopped (removed from the cluster?)")
		case <-ticker.C:
		}
	}
	logger.Info("embedded etcd member promoted to voting member", "name", c.Name)
	return nil
}

// promoteLoop, on a cluster member, promotes every started learner that has caught up,
// while this member leads, every PromoteInterval until ctx ends. A learner not ready yet
// is tried again at the next tick; one that never starts stays a learner, costing no quorum.
func (e *Embedded) promoteLoop(ctx context.Context) {
	defer close(e.promoteDone)
	if e.cluster == nil {
		return
	}
	ticker := time.NewTicker(e.promoteInterval())
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		s := e.etcd.Server
		if s.Leader() != s.MemberID() {
			continue
		}
		for _, m := range s.Cluster().Members() {
			if !m.IsLearner || m.Name == "" {
				continue
			}
			_, err := e.client.MemberPromote(ctx, uint64(m.ID))
			switch {
			case err == nil:
				e.logger.Info("embedded etcd learner promoted", "name", m.Name, "id", m.ID.String())
			case errors.Is(err, rpctypes.ErrMemberLearnerNotReady) || ctx.Err() != nil:
			default:
				e.logger.Warn("embedded etcd learner promotion failed", "name", m.Name, "id", m.ID.String(), "err", err)
			}
		}
	}
}

// addLearner is MemberAddAsLearner, retried while etcd cannot add a learner yet.
func (e *Embedded) addLearner(ctx context.Context, peerURLs []string) (*clientv3.MemberAddResponse, error) {
	var resp *clientv3.MemberAddResponse
	err := retryUnready(ctx, e.promoteInterval(), func() error {
		var err error
		resp, err = e.client.MemberAddAsLearner(ctx, peerURLs)
		return err
	})
	return resp, err
}

// retryUnready calls change, and again every interval until ctx ends while etcd refuses a
// membership change for now: until this member has been connected to a quorum for etcd's
// health interval (5s, so a member just added counts), or while another learner is
// catching up (one at a time).
func retryUnready(ctx context.Context, interval time.Duration, change func() error) error {
	var ticker *time.Ticker
	for {
		err := change()
		if err == nil || !(errors.Is(err, rpctypes.ErrUnhealthy) || errors.Is(err, rpctypes.ErrTooManyLearners)) {
			return err
		}
		if ticker == nil {
			ticker = time.NewTicker(interval)
			defer ticker.Stop()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (waited until %w)", err, ctx.Err())
		case <-ticker.C:
		}
	}
}

// promoteInterval is the cluster's PromoteInterval or its default.
func (e *Embedded) promoteInterval() time.Duration {
	if e.cluster == nil || e.cluster.PromoteInterval <= 0 {
		return DefaultPromoteInterval
	}
	return e.cluster.PromoteInterval
}

// Member is one member of an etcd cluster.
type Member struct {
	// Name is empty for a member added but not started yet.
	Name       string   `json:"name"`
	ID         uint64   `json:"id"`
	PeerURLs   []string `json:"peerURLs"`
	ClientURLs []string `json:"clientURLs,omitempty"`
	Learner    bool     `json:"learner,omitempty"`
	// Leader is set by ListMembers on the member the answering member follows.
	Leader bool `json:"leader,omitempty"`
}

// ListMembers returns the members of the cluster c is connected to, sorted by name, the
// leader marked as the first endpoint of c sees it.
func ListMembers(ctx context.Context, c *clientv3.Client) ([]Member, error) {
	eps := c.Endpoints()
	if len(eps) == 0 {
		return nil, errors.New("etcd member list: the client has no endpoints")
	}
	return listMembers(ctx, c, eps[0])
}

// listMembers is ListMembers asking endpoint for the leader (the in-process client, which
// has no endpoints, ignores it).
func listMembers(ctx context.Context, c *clientv3.Client, endpoint string) ([]Member, error) {
	resp, err := c.MemberList(ctx)
	if err != nil {
		return nil, fmt.Errorf("etcd member list: %w", err)
	}
	st, err := c.Status(ctx, endpoint)
	if err != nil {
		return nil, fmt.Errorf("etcd status: %w", err)
	}
	leader := st.Leader
	members := make([]Member, 0, len(resp.Members))
	for _, m := range resp.Members {
		members = append(members, Member{
			Name: m.Name, ID: m.ID, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs,
			Learner: m.IsLearner, Leader: m.ID == leader,
		})
	}
	slices.SortFunc(members, func(a, b Member) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return members, nil
}

// RemoveMember removes the member named name (or whose hexadecimal ID is name, for a
// member never started) from the cluster c is connected to and returns it, waiting until
// ctx ends while etcd refuses for now (a member added less than 5s ago). No such member
// gives ErrMemberNotFound. A removed member that runs stops (Embedded.Stopped).
func RemoveMember(ctx context.Context, c *clientv3.Client, name string) (Member, error) {
	members, err := ListMembers(ctx, c)
	if err != nil {
		return Member{}, err
	}
	return removeMember(ctx, c, members, name)
}

// removeMember removes the member of members named name through c.
func removeMember(ctx context.Context, c *clientv3.Client, members []Member, name string) (Member, error) {
	for _, m := range members {
		if m.Name == name || (m.Name == "" && fmt.Sprintf("%x", m.ID) == name) {
			err := retryUnready(ctx, DefaultPromoteInterval, func() error {
				_, err := c.MemberRemove(ctx, m.ID)
				return err
			})
			if err != nil {
				return m, fmt.Errorf("etcd member remove %s: %w", name, err)
			}
			return m, nil
		}
	}
	return Member{}, fmt.Errorf("%w: %q", ErrMemberNotFound, name)
}

// Clustered reports whether the embedded etcd is a cluster member (WithCluster).
func (e *Embedded) Clustered() bool { return e.cluster != nil }

// Members returns the cluster's members (ListMembers through the in-process client).
func (e *Embedded) Members(ctx context.Context) ([]Member, error) {
	return listMembers(ctx, e.client, e.endpoints[0])
}

// RemoveMember removes the member named name (see RemoveMember) through the in-process
// client.
func (e *Embedded) RemoveMember(ctx context.Context, name string) (Member, error) {
	members, err := e.Members(ctx)
	if err != nil {
		return Member{}, err
	}
	return removeMember(ctx, e.client, members, name)
}

// AddLearner adds a member named name with peerURLs to the cluster as a learner, which the
// leader promotes once it has caught up, and returns the membership with it, for the new
// member's ClusterConfig.Join.
//  1. A learner with the same peer URLs that never started (an earlier attempt of the same
//     joiner) is removed first; a started member with the same name or peer URLs gives
//     ErrMemberExists.
//  2. Add the learner, waiting while etcd refuses it for now: while another learner is
//     catching up (one at a time), and until this member has been connected to a quorum
//     for etcd's health interval (5s, so a member just promoted counts).
func (e *Embedded) AddLearner(ctx context.Context, name string, peerURLs []string) ([]Member, error) {
	if e.cluster == nil {
		return nil, ErrNotClustered
	}
	members, err := e.Members(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range members {
		samePeer := slices.ContainsFunc(m.PeerURLs, func(u string) bool { return slices.Contains(peerURLs, u) })
		switch {
		case samePeer && m.Learner && m.Name == "":
			if _, err := e.client.MemberRemove(ctx, m.ID); err != nil {
				return nil, fmt.Errorf("removing the unstarted learner %x at %v: %w", m.ID, m.PeerURLs, err)
			}
			e.logger.Info("embedded etcd unstarted learner removed before adding it again", "id", fmt.Sprintf("%x", m.ID), "peerURLs", m.PeerURLs)
		case samePeer:
			return nil, fmt.Errorf("%w: member %q already has peer URLs %v (remove it first)", ErrMemberExists, m.Name, m.PeerURLs)
		case m.Name == name:
			return nil, fmt.Errorf("%w: a member is already named %q (remove it first)", ErrMemberExists, name)
		}
	}
	resp, err := e.addLearner(ctx, peerURLs)
	if err != nil {
		return nil, fmt.Errorf("etcd member add %s %v: %w", name, peerURLs, err)
	}
	e.logger.Info("embedded etcd learner added", "name", name, "id", fmt.Sprintf("%x", resp.Member.ID), "peerURLs", peerURLs)
	out := make([]Member, 0, len(resp.Members))
	for _, m := range resp.Members {
		mem := Member{Name: m.Name, ID: m.ID, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs, Learner: m.IsLearner}
		if m.ID == resp.Member.ID {
			mem.Name = name
		}
		out = append(out, mem)
	}
	return out, nil
}

// logWaiting logs, every c.WaitLogInterval until the returned stop is called, what the
// starting member e waits for: a quorum of its cluster's voting members (naming each
// other member, its peer URL and whether its peer port answers), or its promotion from
// learner. stop returns once the logging has ended.
func logWaiting(e *embed.Etcd, c ClusterConfig, logger *slog.Logger) (stop func()) {
	interval := c.WaitLogInterval
	if interval <= 0 {
		interval = DefaultWaitLogInterval
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			waited := time.Since(start).Round(time.Second)
			select {
			case <-e.Server.ReadyNotify():
				if e.Server.IsLearner() {
					logger.Warn("embedded etcd member waiting to be promoted from learner by the cluster's leader", "member", c.Name, "peerURL", c.PeerURL(), "waited", waited)
				}
				continue
			default:
			}
			voters, peers := waitingPeers(ctx, e)
			if ctx.Err() != nil {
				return
			}
			logger.Warn("embedded etcd member waiting for a quorum of its cluster: start its other members",
				"member", c.Name, "peerURL", c.PeerURL(), "clientURL", c.ClientURL(), "waited", waited,
				"voters", voters, "quorum", voters/2+1, "peers", peers)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// peerDialTimeout bounds the check of a peer's port in a waiting member's log line.
const peerDialTimeout = time.Second

// waitingPeers is the number of voting members e knows, and a description of each other
// member: "name=peerURL (answers|unreachable: why)".
func waitingPeers(ctx context.Context, e *embed.Etcd) (int, string) {
	self := e.Server.MemberID()
	members := e.Server.Cluster().Members()
	voters := 0
	var peers []string
	for _, m := range members {
		if !m.IsLearner {
			voters++
		}
		if m.ID == self {
			continue
		}
		name := m.Name
		if name == "" {
			name = m.ID.String()
		}
		for _, u := range m.PeerURLs {
			peers = append(peers, name+"="+u+" ("+dialState(ctx, u)+")")
		}
	}
	slices.Sort(peers)
	if len(peers) == 0 {
		return voters, "none"
	}
	return voters, strings.Join(peers, ", ")
}

// dialState says whether the host and port of URL u accept a TCP connection.
func dialState(ctx context.Context, u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "not a URL"
	}
	d := net.Dialer{Timeout: peerDialTimeout}
	conn, err := d.DialContext(ctx, "tcp", p.Host)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err
		}
		return "unreachable: " + err.Error()
	}
	conn.Close()
	return "its port answers"
}
