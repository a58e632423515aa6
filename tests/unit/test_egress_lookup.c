/* daemon/egress_lookup.c, through the engine (egress.h) and on its own: host-name lookups
 * with c-ares on the loop, a channel each. Each test runs in a forked child with network and
 * mount namespaces of its own (skipped without them), where /etc/resolv.conf names a DNS server
 * of the test's on 127.0.0.1 (fake_dns): it answers the names of dns_records, A and AAAA,
 * whoami.example with an address naming the server, NXDOMAIN for the others, and never answers
 * a name starting with "slow", as a DNS server that has gone away. Every query it gets is
 * written down in dns_log, with the port it came from. */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "egress.h"
#include "egress_fixture.h"
#include "egress_lookup.h"
#include "msg.h"
#include "pf_cleanup.h"

#define DNS_A    1
#define DNS_AAAA 28

static const struct {
    const char *name;
    int type;
    const char *addr;
} dns_records[] = {
        {"good.example", DNS_A, "11.0.0.1"},         {"private.example", DNS_A, "10.0.0.7"},
        {"v6.example", DNS_AAAA, "2606:4700::1111"}, {"v6private.example", DNS_AAAA, "fd00::7"},
        {"mixed.example", DNS_A, "10.0.0.8"},        {"mixed.example", DNS_AAAA, "2606:4700::1111"},
};

/* The question's name (lowercased, dotted) of the DNS message p; *ret_end: where its
 * question ends. -1: malformed. */
static int
dns_question(const unsigned char *p, size_t n, char *name, size_t size, size_t *ret_end)
{
    size_t at = 12, k = 0;
    while (at < n && p[at]) {
        size_t len = p[at++];
        if (len > 63 || at + len > n || k + len + 2 > size)
            return -1;
        if (k)
            name[k++] = '.';
        for (size_t i = 0; i < len; i++)
            name[k++] = (char) tolower(p[at + i]);
        at += len;
    }
    if (at + 5 > n)
        return -1;
    name[k] = '\0';
    *ret_end = at + 5; /* the root label, type and class */
    return 0;
}

/* The queries the test's DNS servers got, in shared memory: the servers are forked. */
#define DNS_LOG_MAX 512
struct dns_query_seen {
    char name[256];
    int server;    /* 1: 127.0.0.1, 2: 127.0.0.2 */
    unsigned port; /* the source port it came from */
};
static struct dns_log {
    unsigned n; /* may pass DNS_LOG_MAX: those past it are not written down */
    struct dns_query_seen q[DNS_LOG_MAX];
} * dns_log;

static void
dns_log_query(const char *name, int server, const struct sockaddr_storage *from)
{
    unsigned i = __atomic_fetch_add(&dns_log->n, 1, __ATOMIC_SEQ_CST);
    if (i >= DNS_LOG_MAX)
        return;
    snprintf(dns_log->q[i].name, sizeof(dns_log->q[i].name), "%s", name);
    dns_log->q[i].server = server;
    dns_log->q[i].port = ntohs(((const struct sockaddr_in *) from)->sin_port);
}

/* The first query the servers got for name, or NULL. */
static const struct dns_query_seen *
dns_log_find(const char *name)
{
    unsigned n = __atomic_load_n(&dns_log->n, __ATOMIC_SEQ_CST);
    for (unsigned i = 0; i < n && i < DNS_LOG_MAX; i++)
        if (strcmp(dns_log->q[i].name, name) == 0)
            return &dns_log->q[i];
    return NULL;
}

/* The reply to query q (its question ending at end) for name, from server: its records of q's
 * type; whoami.example is 11.0.0.1<server>. */
static size_t
dns_reply(const unsigned char *q, size_t end, const char *name, int server, unsigned char *r)
{
    int type = q[end - 4] << 8 | q[end - 3];
    memcpy(r, q, end);
    r[2] = (unsigned char) (0x84 | (q[2] & 0x01)); /* a response, authoritative, RD as asked */
    r[3] = 0x80;                                   /* recursion available, no error */
    memset(r + 6, 0, 6);                           /* no answer, authority, additional yet */
    size_t at = end;
    bool known = false;
    char whoami[16];
    snprintf(whoami, sizeof(whoami), "11.0.0.1%d", server);
    for (size_t i = 0; i <= PF_ELEMENTSOF(dns_records); i++) {
        bool mine = i == PF_ELEMENTSOF(dns_records);
        if (strcmp(mine ? "whoami.example" : dns_records[i].name, name) != 0)
            continue;
        known = true;
        if ((mine ? DNS_A : dns_records[i].type) != type)
            continue;
        int len = type == DNS_A ? 4 : 16;
        unsigned char rr[12] = {0xc0, 12, 0, (unsigned char) type, 0, 1, 0, 0,
                                0,    60, 0, (unsigned char) len};
        memcpy(r + at, rr, sizeof(rr));
        inet_pton(type == DNS_A ? AF_INET : AF_INET6, mine ? whoami : dns_records[i].addr,
                  r + at + 12);
        at += 12 + (size_t) len;
        r[7]++;
    }
    if (!known)
        r[3] |= 3; /* NXDOMAIN */
    return at;
}

static void
dns_serve(int fd, int server)
{
    for (;;) {
        unsigned char q[512], r[512 + 2 * 28];
        struct sockaddr_storage from;
        socklen_t from_len = sizeof(from);
        ssize_t n = recvfrom(fd, q, sizeof(q), 0, (struct sockaddr *) &from, &from_len);
        char name[256];
        size_t end;
        if (n < 12 || dns_question(q, (size_t) n, name, sizeof(name), &end) < 0)
            continue;
        dns_log_query(name, server, &from);
        if (strncmp(name, "slow", 4) == 0)
            continue;
        size_t len = dns_reply(q, end, name, server, r);
        if (sendto(fd, r, len, 0, (struct sockaddr *) &from, from_len) < 0)
            continue;
    }
}

/* Bind-mounts a file holding text over path (in this mount namespace). */
static int
mount_text(const char *path, const char *text)
{
    char file[] = "/tmp/pyfence-etc-XXXXXX";
    int fd = mkstemp(file);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t) strlen(text))
        return -1;
    close(fd);
    int bound = mount(file, path, NULL, MS_BIND, NULL);
    unlink(file);
    return bound;
}

/* Bind-mounts text over path again: the file under the mount in place is unlinked, so path must
 * be unmounted first (mounting onto it fails with ENOENT). */
static int
remount_text(const char *path, const char *text)
{
    if (umount2(path, MNT_DETACH) < 0)
        return -1;
    return mount_text(path, text);
}

/* A DNS server of the test's (a child that dies with this process) on addr:53, written down as
 * server in dns_log. -1: cannot set up here. */
static int
dns_server_start(const char *addr, int server)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in dns = {
            .sin_family = AF_INET, .sin_port = htons(53), .sin_addr.s_addr = inet_addr(addr)};
    if (s < 0 || bind(s, (struct sockaddr *) &dns, sizeof(dns)) < 0)
        return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) /* it died before prctl */
            _exit(0);
        dns_serve(s, server);
        _exit(0);
    }
    close(s);
    return 0;
}

/* Network and mount namespaces of this process's own, with hosts_text as /etc/hosts and the
 * test's DNS server 1 on 127.0.0.1:53, resolv.conf asking for a 30 s timeout (c-ares's own
 * bound must win). 0, or -1: cannot set up here. */
static int
fake_dns(const char *hosts_text)
{
    if (unshare(CLONE_NEWNS | CLONE_NEWNET) < 0 ||
        mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount_text("/etc/resolv.conf", "nameserver 127.0.0.1\noptions timeout:30 attempts:1\n") <
                0 ||
        mount_text("/etc/hosts", hosts_text) < 0)
        return -1;
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq lo = {.ifr_name = "lo"};
    if (s < 0 || ioctl(s, SIOCGIFFLAGS, &lo) < 0)
        return -1;
    lo.ifr_flags |= IFF_UP;
    if (ioctl(s, SIOCSIFFLAGS, &lo) < 0)
        return -1;
    close(s);
    dns_log =
            mmap(NULL, sizeof(*dns_log), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (dns_log == MAP_FAILED)
        return -1;
    return dns_server_start("127.0.0.1", 1);
}

/* child() runs in a forked process (it makes namespaces of its own): 0 passes, 77 skips. It
 * ends with exit(), not _exit(): under ASan, LeakSanitizer checks it. */
static void
run_in_namespaces(int (*child)(void))
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        exit(child());
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        skip(); /* no namespaces here (not root): nothing to test with */
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* Linux's struct in6_ifreq (<linux/ipv6.h> clashes with <netinet/in.h>). */
struct v6_ifreq {
    struct in6_addr addr;
    uint32_t prefixlen;
    int ifindex;
};

/* 11.0.0.1 and, when IPv6 is there, 2606:4700::1111 (public addresses) on lo, and a forked
 * HTTP server on both answering every connection 200 "ok". *ret_v6: whether it listens on the
 * latter. -1: cannot set up here. */
static pid_t
public_server(int *ret_port, bool *ret_v6)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq alias = {.ifr_name = "lo:1"};
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = inet_addr("11.0.0.1")};
    memcpy(&alias.ifr_addr, &sa, sizeof(sa));
    if (s < 0 || ioctl(s, SIOCSIFADDR, &alias) < 0)
        return -1;
    close(s);
    struct v6_ifreq v6 = {.prefixlen = 128, .ifindex = (int) if_nametoindex("lo")};
    inet_pton(AF_INET6, "2606:4700::1111", &v6.addr);
    int s6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    *ret_v6 = s6 >= 0 && ioctl(s6, SIOCSIFADDR, &v6) == 0;
    if (s6 >= 0)
        close(s6);
    /* [::] takes 11.0.0.1's connections too (v4-mapped); without IPv6, 11.0.0.1 alone */
    struct sockaddr_in6 any6 = {.sin6_family = AF_INET6, .sin6_addr = in6addr_any};
    int fd = socket(*ret_v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_storage bound;
    socklen_t len = *ret_v6 ? sizeof(any6) : sizeof(sa);
    memcpy(&bound, *ret_v6 ? (void *) &any6 : (void *) &sa, len);
    if (fd < 0 || bind(fd, (struct sockaddr *) &bound, len) < 0 || listen(fd, 64) < 0 ||
        getsockname(fd, (struct sockaddr *) &bound, &len) < 0)
        return -1;
    *ret_port = ntohs(((struct sockaddr_in *) &bound)->sin_port); /* same offset in both */
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) {
        close(fd);
        return pid;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* it died before prctl */
        _exit(0);
    static const char reply[] =
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    for (int c; (c = accept(fd, NULL, NULL)) >= 0; close(c)) {
        char buf[4096];
        if (read(c, buf, sizeof(buf)) <= 0 || write(c, reply, sizeof(reply) - 1) < 0)
            continue;
    }
    _exit(0);
}

static int
count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d));)
        n += de->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static int
count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d));)
        n += de->d_name[0] != '.';
    if (d)
        closedir(d);
    return n - 1; /* d's own */
}

#define HOSTS_TEXT "127.0.0.1 localhost\n11.0.0.1 hosts.example\n"

/* What a lookup test's child works with: the DNS server, the HTTP server, an engine and rules
 * for every name of dns_records (and slow.example, hosts.example) at the server's port. */
struct world {
    pid_t server;
    int port;
    bool v6; /* the server listens on 2606:4700::1111 too */
    struct egress *e;
    struct policy_egress rules;
};

/* 0, 77 cannot set up here, else failed. */
static int
world_init(struct world *w)
{
    if (fake_dns(HOSTS_TEXT) < 0 || (w->server = public_server(&w->port, &w->v6)) < 0)
        return 77;
    struct pf_error *err = NULL;
    if (!(w->e = egress_new(uv_default_loop(), 1 << 20, 1024, &err)))
        return 2;
    char json[512];
    snprintf(json, sizeof(json),
             "[{\"url\": \"http://slow.example/\"}, {\"url\": \"http://good.example:%d/\"}, "
             "{\"url\": \"http://private.example:%d/\"}, {\"url\": \"http://v6.example:%d/\"}, "
             "{\"url\": \"http://v6private.example:%d/\"}, "
             "{\"url\": \"http://mixed.example:%d/\"}, {\"url\": \"http://hosts.example:%d/\"}]",
             w->port, w->port, w->port, w->port, w->port, w->port);
    _cleanup_json_ cJSON *rules_json = cJSON_Parse(json);
    if (policy_egress_parse(rules_json, "test", &w->rules, &err) < 0)
        return 2;
    uv_update_time(uv_default_loop()); /* as in the daemon, where requests come in callbacks */
    return 0;
}

/* Closes the engine and runs the loop until nothing is left in it: 0, else failed. */
static int
world_finish(struct world *w, int rc)
{
    if (w->e) {
        egress_close(w->e);
        if (uv_run(uv_default_loop(), UV_RUN_DEFAULT) != 0 || uv_loop_close(uv_default_loop()) != 0)
            rc = rc ? rc : 90;
    }
    policy_egress_finish(&w->rules);
    if (w->server > 0) {
        kill(w->server, SIGKILL);
        waitpid(w->server, NULL, 0);
    }
    return rc;
}

/* GET http://name:port/x for owner, run until answered (5 s timeout): its ending. */
static struct ending
get(struct world *w, const char *name, uint64_t owner)
{
    char url[128];
    snprintf(url, sizeof(url), "http://%s:%d/x", name, w->port);
    struct ending end = {0};
    if (egress_fixture_start_get(w->e, &w->rules, url, owner, 5000, 1024, &end))
        egress_fixture_run_until_answered(&end, 1);
    fprintf(stderr, "  %s: %s %d (%s)\n", name, end.type, end.status, end.message);
    return end;
}

/* Starts n GETs of slow.example (never answered) for owner, each with timeout_ms. */
static int
start_hung(struct world *w, struct ending *ends, int n, uint64_t owner, uint64_t timeout_ms)
{
    for (int i = 0; i < n; i++)
        if (!egress_fixture_start_get(w->e, &w->rules, "http://slow.example/x", owner, timeout_ms,
                                      1024, &ends[i]))
            return -1;
    return 0;
}

/* The child of test_unanswered_lookup_holds_nobody: a request for a name the DNS server never
 * answers must end at its own timeout, 300 ms, without the loop waiting for the lookup. */
static int
unanswered_child(void)
{
    struct world w = {0};
    int rc = world_init(&w);
    if (rc)
        return rc;
    struct ending end = {0};
    uint64_t start = uv_hrtime();
    if (start_hung(&w, &end, 1, 1000, 300) < 0)
        return world_finish(&w, 3);
    double took_s = egress_fixture_run_until_answered(&end, 1);
    fprintf(stderr, "  slow.example: %d answer(s), %s (%s), after %.1f s\n", end.calls, end.type,
            end.message, (double) (uv_hrtime() - start) / 1e9);
    /* 10 s: far from 0.3 s on any machine, far from resolv.conf's 30 s. */
    return world_finish(&w,
                        end.calls == 1 && strcmp(end.type, "timeout") == 0 && took_s < 10 ? 0 : 4);
}

/* A request whose host name is still being looked up when it ends (its timeout, its job
 * killed) does not hold the loop, which every agent shares, until the lookup gives up. */
static void
test_unanswered_lookup_holds_nobody(void **state)
{
    (void) state;
    run_in_namespaces(unanswered_child);
}

#define HUNG_UIDS     8
#define HUNG_PER_UID  8
#define HUNG_LOOKUPS  (HUNG_UIDS * HUNG_PER_UID)
#define HUNG_DEADLINE 10000 /* ms: still hung while the checks run */

static int
many_uids_child(void)
{
    struct world w = {0};
    int rc = world_init(&w);
    if (rc)
        return rc;
    int threads = count_threads();
    /* Eight uids (more than four, each past what was its share of the pool) whose lookups hang */
    static struct ending hung[HUNG_LOOKUPS];
    for (int u = 0; u < HUNG_UIDS; u++)
        if (start_hung(&w, &hung[u * HUNG_PER_UID], HUNG_PER_UID, 1000 + (uint64_t) u,
                       HUNG_DEADLINE) < 0)
            return world_finish(&w, 3);
    /* Another uid's name, which the DNS server answers: served at once all the same. */
    uint64_t start = uv_hrtime();
    struct ending good = get(&w, "good.example", 2000);
    double took = (double) (uv_hrtime() - start) / 1e9;
    if (good.calls != 1 || good.status != 200 || took > 2)
        return world_finish(&w, 4);
    /* /etc/hosts is read first ("fb"); its answers are checked like DNS's. */
    struct ending hosts = get(&w, "hosts.example", 2000);
    if (hosts.status != 200)
        return world_finish(&w, 5);
    /* A name the DNS server answers with a private address is still refused. */
    struct ending priv = get(&w, "private.example", 2000);
    if (strcmp(priv.type, "refused") != 0 || !strstr(priv.message, "10.0.0.7"))
        return world_finish(&w, 6);
    int hung_answered = 0;
    for (int i = 0; i < HUNG_LOOKUPS; i++)
        hung_answered += hung[i].calls;
    /* No thread at all for the lookups: the loop's own, as before the first. */
    fprintf(stderr, "  threads: %d before, %d now; %d hung lookups answered\n", threads,
            count_threads(), hung_answered);
    if (count_threads() != threads || hung_answered != 0)
        return world_finish(&w, 7);
    return world_finish(&w, 0);
}

/* Many uids' lookups hung on a DNS server that does not answer do not hold back another
 * uid's lookup (they took every place of libuv's pool when lookups ran there) nor take a
 * thread; /etc/hosts and private answers are handled as before. */
static void
test_hung_lookups_of_many_uids_hold_nobody(void **state)
{
    (void) state;
    run_in_namespaces(many_uids_child);
}

static int
bounded_child(void)
{
    struct world w = {0};
    int rc = world_init(&w);
    if (rc)
        return rc;
    /* One uid's requests waiting for their lookups (hung) count, up to the bound. */
    static struct ending hung[EGRESS_LOOKUPS_MAX_PER_OWNER];
    if (start_hung(&w, hung, EGRESS_LOOKUPS_MAX_PER_OWNER, 1000, 1000) < 0)
        return world_finish(&w, 3);
    struct ending past = {0};
    bool started = egress_fixture_start_get(w.e, &w.rules, "http://slow.example/x", 1000, 5000,
                                            1024, &past);
    fprintf(stderr, "  past the bound: %s (%s)\n", past.type, past.message);
    char limit[64];
    snprintf(limit, sizeof(limit), "uid 1000 has %d host-name lookups under way",
             EGRESS_LOOKUPS_MAX_PER_OWNER);
    if (started || strcmp(past.type, "connection") != 0 || !strstr(past.message, limit))
        return world_finish(&w, 4);
    /* another uid is not affected */
    struct ending good = get(&w, "good.example", 1001);
    if (good.status != 200)
        return world_finish(&w, 5);
    /* Those requests end at their timeout, 1 s, and their lookups with them, though the name
     * server would still be waited for (3 s): the uid is served again at once. */
    egress_fixture_run_until_answered(hung, EGRESS_LOOKUPS_MAX_PER_OWNER);
    struct ending again = get(&w, "good.example", 1000);
    if (again.status != 200)
        return world_finish(&w, 6);
    return world_finish(&w, 0);
}

/* A uid's lookups in flight are bounded: past the bound its request fails at once with a
 * message naming it, and other uids are served. A request that ends ends its lookup: it
 * counts no more. */
static void
test_lookups_in_flight_are_bounded_per_uid(void **state)
{
    (void) state;
    run_in_namespaces(bounded_child);
}

static int
close_child(void)
{
    struct world w = {0};
    int rc = world_init(&w);
    if (rc)
        return rc;
    static struct ending hung[HUNG_LOOKUPS];
    for (int u = 0; u < HUNG_UIDS; u++)
        if (start_hung(&w, &hung[u * HUNG_PER_UID], HUNG_PER_UID, 1000 + (uint64_t) u,
                       HUNG_DEADLINE) < 0)
            return world_finish(&w, 3);
    for (int i = 0; i < 20; i++) /* the queries are sent, unanswered */
        uv_run(uv_default_loop(), UV_RUN_NOWAIT);
    uint64_t start = uv_hrtime();
    rc = world_finish(&w, 0); /* egress_close, the loop run empty, uv_loop_close */
    double took = (double) (uv_hrtime() - start) / 1e9;
    int answered = 0;
    for (int i = 0; i < HUNG_LOOKUPS; i++)
        answered += hung[i].calls == 1 && strcmp(hung[i].message, "pyfenced is stopping") == 0;
    fprintf(stderr, "  closed with %d hung lookups in %.3f s (%d told pyfenced is stopping)\n",
            HUNG_LOOKUPS, took, answered);
    /* 0.5 s: far below c-ares's 3 s, and resolv.conf's 30 s */
    return rc ? rc : took < 0.5 && answered == HUNG_LOOKUPS ? 0 : 4;
}

/* Stopping with lookups hung on a DNS server does not wait for them: the engine closes, the
 * loop has nothing left, and (under ASan) nothing leaks. */
static void
test_close_with_hung_lookups_returns_at_once(void **state)
{
    (void) state;
    run_in_namespaces(close_child);
}

/* A lookup test child's start: the fake DNS with hosts as /etc/hosts, and an engine of at most
 * max_in_flight lookups. 0, or the child's exit status: 77 (cannot set up here) or 2. */
static int
child_start(const char *hosts, unsigned max_in_flight, struct egress_lookups **ret)
{
    if (fake_dns(hosts) < 0)
        return 77;
    struct pf_error *err = NULL;
    *ret = egress_lookups_new(uv_default_loop(), max_in_flight, &err);
    pf_error_free(err);
    return *ret ? 0 : 2;
}

/* A lookup test child's end: l closed and the loop drained to nothing (5 when something is
 * left), else 0 when ok, 4 when not. */
static int
child_end(struct egress_lookups *l, bool ok)
{
    egress_lookups_close(l);
    if (uv_run(uv_default_loop(), UV_RUN_DEFAULT) != 0 || uv_loop_close(uv_default_loop()) != 0)
        return 5;
    return ok ? 0 : 4;
}

struct answer {
    int calls, status;
    size_t n;
    struct egress_address first;
};

static void
record_answer(void *ctx, int status, const struct egress_address *addrs, size_t n, const char *why)
{
    struct answer *a = ctx;
    (void) why;
    a->calls++;
    a->status = status;
    a->n = n;
    if (n)
        a->first = addrs[0];
}

static int
cancel_child(void)
{
    struct pf_error *err = NULL;
    struct egress_lookups *l = NULL;
    int set_up = child_start(HOSTS_TEXT, 16, &l);
    if (set_up != 0)
        return set_up;
    struct answer good = {0}, hung = {0}, cancelled = {0}, v6 = {0};
    struct egress_lookup *g =
            egress_lookup_start(l, "good.example", 1, 5000, record_answer, &good, &err);
    struct egress_lookup *h =
            egress_lookup_start(l, "slow.example", 1, 5000, record_answer, &hung, &err);
    struct egress_lookup *c =
            egress_lookup_start(l, "private.example", 2, 5000, record_answer, &cancelled, &err);
    struct egress_lookup *s =
            egress_lookup_start(l, "v6.example", 3, 5000, record_answer, &v6, &err);
    if (!g || !h || !c || !s)
        return 3;
    /* Their queries are sent, none answered yet: two of them are cancelled now. */
    egress_lookup_cancel(h);
    egress_lookup_cancel(c);
    uint64_t start = uv_hrtime();
    while ((!good.calls || !v6.calls) && uv_hrtime() - start < 5000000000ull)
        uv_run(uv_default_loop(), UV_RUN_ONCE);
    char text[INET6_ADDRSTRLEN] = "";
    inet_ntop(v6.first.family, &v6.first.addr, text, sizeof(text));
    fprintf(stderr, "  good %d/%d/%zu, v6 %d/%d/%s, cancelled %d + %d, in flight %u\n", good.calls,
            good.status, good.n, v6.calls, v6.status, text, hung.calls, cancelled.calls,
            egress_lookups_in_flight(l));
    bool ok = good.calls == 1 && good.status == 0 && good.n == 1 && good.first.family == AF_INET &&
              v6.calls == 1 && v6.status == 0 && strcmp(text, "2606:4700::1111") == 0 &&
              hung.calls == 0 && cancelled.calls == 0 &&
              egress_lookups_in_flight(l) == 0; /* the hung one ended when cancelled */
    egress_lookups_close(l);
    if (uv_run(uv_default_loop(), UV_RUN_DEFAULT) != 0 || uv_loop_close(uv_default_loop()) != 0)
        return 5;
    return ok && hung.calls == 0 ? 0 : 4;
}

/* Cancelling some lookups leaves the others to answer, and a cancelled one is never answered,
 * even when closed. */
static void
test_cancelled_lookup_leaves_the_others(void **state)
{
    (void) state;
    run_in_namespaces(cancel_child);
}

/* Runs the loop until a answers or done() says so, or 5 s. */
static void
run_until(const struct answer *a, bool (*done)(void))
{
    uint64_t start = uv_hrtime();
    while (!a->calls && !(done && done()) && uv_hrtime() - start < 5000000000ull) {
        uv_run(uv_default_loop(), UV_RUN_NOWAIT);
        poll(NULL, 0, 5);
    }
}

static bool
both_slow_queries_seen(void)
{
    return dns_log_find("slow1.example") && dns_log_find("slow2.example");
}

static int
ports_child(void)
{
    struct pf_error *err = NULL;
    struct egress_lookups *l = NULL;
    int set_up = child_start(HOSTS_TEXT, 16, &l);
    if (set_up != 0)
        return set_up;
    struct answer a1 = {0}, a2 = {0};
    struct egress_lookup *q1 =
            egress_lookup_start(l, "slow1.example", 1, 5000, record_answer, &a1, &err);
    struct egress_lookup *q2 =
            egress_lookup_start(l, "slow2.example", 1, 5000, record_answer, &a2, &err);
    if (!q1 || !q2)
        return 3;
    run_until(&a1, both_slow_queries_seen);
    const struct dns_query_seen *s1 = dns_log_find("slow1.example");
    const struct dns_query_seen *s2 = dns_log_find("slow2.example");
    fprintf(stderr, "  source ports: slow1 %u, slow2 %u\n", s1 ? s1->port : 0, s2 ? s2->port : 0);
    bool ok = s1 && s2 && s1->port != s2->port && a1.calls == 0 && a2.calls == 0;
    return child_end(l, ok);
}

/* Two lookups under way at once send their queries from sockets of their own, so from two
 * source ports (the kernel's random ephemeral ones): an off-path spoofer must guess the port
 * as well as the query id. One shared channel sent both from one socket. */
static void
test_concurrent_lookups_use_their_own_source_ports(void **state)
{
    (void) state;
    run_in_namespaces(ports_child);
}

static int
cancel_frees_child(void)
{
    struct pf_error *err = NULL;
    struct egress_lookups *l = NULL;
    int set_up = child_start(HOSTS_TEXT, 1024, &l);
    if (set_up != 0)
        return set_up;
    int fds_before = count_fds();
    static struct answer hung[EGRESS_LOOKUPS_MAX_PER_OWNER];
    struct egress_lookup *q[EGRESS_LOOKUPS_MAX_PER_OWNER];
    for (int i = 0; i < EGRESS_LOOKUPS_MAX_PER_OWNER; i++)
        if (!(q[i] = egress_lookup_start(l, "slow.example", 7, 10000, record_answer, &hung[i],
                                         &err)))
            return 3;
    for (int i = 0; i < 20; i++) /* the queries are sent, unanswered */
        uv_run(uv_default_loop(), UV_RUN_NOWAIT);
    int fds_hung = count_fds();
    /* The uid's bound bites while they are under way... */
    struct answer past = {0};
    struct egress_lookup *p =
            egress_lookup_start(l, "good.example", 7, 5000, record_answer, &past, &err);
    bool refused = !p && err && err->code == PF_E_BUSY;
    fprintf(stderr, "  past the bound: %s\n", err ? err->msg : "(started)");
    err = pf_error_free(err);
    /* ... and no more once they are cancelled: their sockets are closed at once (no loop run
     * in between), and they count no more. */
    for (int i = 0; i < EGRESS_LOOKUPS_MAX_PER_OWNER; i++)
        egress_lookup_cancel(q[i]);
    int fds_cancelled = count_fds();
    unsigned counted = egress_lookups_in_flight_for(l, 7);
    struct answer again = {0};
    struct egress_lookup *g =
            egress_lookup_start(l, "good.example", 7, 5000, record_answer, &again, &err);
    if (g)
        run_until(&again, NULL);
    int hung_calls = 0;
    for (int i = 0; i < EGRESS_LOOKUPS_MAX_PER_OWNER; i++)
        hung_calls += hung[i].calls;
    fprintf(stderr,
            "  fds: %d before, %d with %d hung, %d once cancelled; %u counted; again: %d/%d; "
            "%d cancelled answered\n",
            fds_before, fds_hung, EGRESS_LOOKUPS_MAX_PER_OWNER, fds_cancelled, counted, again.calls,
            again.status, hung_calls);
    bool ok = fds_hung > fds_before && refused && fds_cancelled == fds_before && counted == 0 &&
              g && again.calls == 1 && again.status == 0 && hung_calls == 0;
    return child_end(l, ok);
}

/* A cancelled lookup hung on a DNS server that does not answer gives its socket back at once
 * and no longer counts against its uid's bound: its asker is gone, nothing waits for it. */
static void
test_cancelled_hung_lookup_frees_its_fd_and_place(void **state)
{
    (void) state;
    run_in_namespaces(cancel_frees_child);
}

static int
total_bound_child(void)
{
    struct pf_error *err = NULL;
    struct egress_lookups *l = NULL;
    int set_up = child_start(HOSTS_TEXT, 2, &l);
    if (set_up != 0)
        return set_up;
    struct answer a[3] = {{0}};
    struct egress_lookup *q0 =
            egress_lookup_start(l, "slow.example", 1, 10000, record_answer, &a[0], &err);
    struct egress_lookup *q1 =
            egress_lookup_start(l, "slow.example", 2, 10000, record_answer, &a[1], &err);
    if (!q0 || !q1)
        return 3;
    /* A third owner, under its own bound: past the total one all the same. */
    struct egress_lookup *q2 =
            egress_lookup_start(l, "good.example", 3, 5000, record_answer, &a[2], &err);
    bool refused = !q2 && err && err->code == PF_E_BUSY &&
                   strstr(err->msg, "pyfenced has 2 host-name lookups under way");
    fprintf(stderr, "  third: %s\n", err ? err->msg : "(started)");
    err = pf_error_free(err);
    egress_lookup_cancel(q0);
    q2 = egress_lookup_start(l, "good.example", 3, 5000, record_answer, &a[2], &err);
    err = pf_error_free(err);
    if (q2)
        run_until(&a[2], NULL);
    fprintf(stderr, "  once one is cancelled: %d/%d\n", a[2].calls, a[2].status);
    bool ok = refused && q2 && a[2].calls == 1 && a[2].status == 0 && a[0].calls == 0;
    return child_end(l, ok);
}

/* At most max_in_flight lookups (the daemon's max_workers) are under way, whoever asks; a
 * cancelled one makes room at once. */
static void
test_lookups_under_way_are_bounded_in_all(void **state)
{
    (void) state;
    run_in_namespaces(total_bound_child);
}

/* Looks name up for owner 1, run until answered: its first address as text, or "" on error. */
static void
whoami(struct egress_lookups *l, char *text, size_t size)
{
    struct pf_error *err = NULL;
    struct answer a = {0};
    text[0] = '\0';
    struct egress_lookup *q =
            egress_lookup_start(l, "whoami.example", 1, 5000, record_answer, &a, &err);
    err = pf_error_free(err);
    if (!q)
        return;
    run_until(&a, NULL);
    if (a.calls == 1 && a.status == 0)
        inet_ntop(a.first.family, &a.first.addr, text, (socklen_t) size);
}

static int
resolv_child(void)
{
    if (fake_dns(HOSTS_TEXT) < 0 || dns_server_start("127.0.0.2", 2) < 0)
        return 77;
    struct pf_error *err = NULL;
    struct egress_lookups *l = egress_lookups_new(uv_default_loop(), 16, &err);
    if (!l)
        return 2;
    char first[INET6_ADDRSTRLEN], second[INET6_ADDRSTRLEN];
    whoami(l, first, sizeof(first));
    /* The network changed: another name server. */
    if (remount_text("/etc/resolv.conf", "nameserver 127.0.0.2\n") < 0)
        return 77;
    whoami(l, second, sizeof(second));
    fprintf(stderr, "  whoami.example: %s, then %s\n", first, second);
    egress_lookups_close(l);
    if (uv_run(uv_default_loop(), UV_RUN_DEFAULT) != 0 || uv_loop_close(uv_default_loop()) != 0)
        return 5;
    return strcmp(first, "11.0.0.11") == 0 && strcmp(second, "11.0.0.12") == 0 ? 0 : 4;
}

/* /etc/resolv.conf is read when a lookup starts: a change (a network change) is honoured by
 * the next lookup, without a restart. */
static void
test_resolv_conf_is_read_per_lookup(void **state)
{
    (void) state;
    run_in_namespaces(resolv_child);
}

static int
servers_child(void)
{
    if (fake_dns(HOSTS_TEXT) < 0)
        return 77;
    /* Three name servers that refuse (nothing listens: ICMP port unreachable), then ours. */
    if (remount_text("/etc/resolv.conf", "nameserver 127.0.0.2\nnameserver 127.0.0.3\n"
                                         "nameserver 127.0.0.4\nnameserver 127.0.0.1\n") < 0)
        return 77;
    struct pf_error *err = NULL;
    struct egress_lookups *l = egress_lookups_new(uv_default_loop(), 16, &err);
    if (!l)
        return 2;
    char fourth[INET6_ADDRSTRLEN];
    whoami(l, fourth, sizeof(fourth));
    fprintf(stderr, "  whoami.example with 127.0.0.1 fourth: '%s', queries seen: %u\n", fourth,
            __atomic_load_n(&dns_log->n, __ATOMIC_SEQ_CST));
    egress_lookups_close(l);
    if (uv_run(uv_default_loop(), UV_RUN_DEFAULT) != 0 || uv_loop_close(uv_default_loop()) != 0)
        return 5;
    return fourth[0] == '\0' && !dns_log_find("whoami.example") ? 0 : 4;
}

/* A lookup asks the first EGRESS_LOOKUP_SERVERS_MAX name servers of resolv.conf only (glibc's
 * MAXNS): each may hold a socket or two, which the fd budget counts per worker. */
static void
test_only_the_first_name_servers_are_asked(void **state)
{
    (void) state;
    run_in_namespaces(servers_child);
}

static int
aaaa_child(void)
{
    struct world w = {0};
    int rc = world_init(&w);
    if (rc)
        return rc;
    fprintf(stderr, "  IPv6 on lo: %s\n", w.v6 ? "yes" : "no");
    /* A public AAAA answer reaches libcurl (CURLOPT_RESOLVE) and is connected to. Without IPv6
     * here the connection fails, but not the lookup nor the address check. */
    struct ending v6 = get(&w, "v6.example", 1);
    if (w.v6 ? v6.status != 200
             : strcmp(v6.type, "connection") != 0 || strstr(v6.message, "look up"))
        return world_finish(&w, 3);
    /* A private one is refused like a private A answer. */
    struct ending priv = get(&w, "v6private.example", 1);
    if (strcmp(priv.type, "refused") != 0 || !strstr(priv.message, "fd00::7"))
        return world_finish(&w, 4);
    /* A private A beside a public AAAA: only the public one is used. */
    struct ending mixed = get(&w, "mixed.example", 1);
    if (w.v6 && mixed.status != 200)
        return world_finish(&w, 5);
    return world_finish(&w, 0);
}

/* Names are asked for A and AAAA: a public IPv6 answer is used, a private one refused. */
static void
test_aaaa_answers_are_checked_and_used(void **state)
{
    (void) state;
    run_in_namespaces(aaaa_child);
}

static int
many_child(void)
{
    /* many.example: more private addresses than a lookup keeps, then a public one (from
     * /etc/hosts: a DNS answer that long does not fit the 512 bytes of UDP) */
    char hosts[4096] = HOSTS_TEXT;
    for (int i = 1; i <= EGRESS_LOOKUP_MAX_ADDRESSES; i++)
        snprintf(hosts + strlen(hosts), sizeof(hosts) - strlen(hosts), "10.0.1.%d many.example\n",
                 i);
    snprintf(hosts + strlen(hosts), sizeof(hosts) - strlen(hosts), "11.0.0.1 many.example\n");
    struct pf_error *err = NULL;
    struct egress_lookups *l = NULL;
    int set_up = child_start(hosts, 16, &l);
    if (set_up != 0)
        return set_up;
    struct answer many = {0};
    if (!egress_lookup_start(l, "many.example", 1, 5000, record_answer, &many, &err))
        return 3;
    uint64_t start = uv_hrtime();
    while (!many.calls && uv_hrtime() - start < 5000000000ull)
        uv_run(uv_default_loop(), UV_RUN_ONCE);
    char text[INET6_ADDRSTRLEN] = "";
    inet_ntop(many.first.family, &many.first.addr, text, sizeof(text));
    fprintf(stderr, "  many.example: %d answer(s), status %d, %zu kept, first %s\n", many.calls,
            many.status, many.n, text);
    bool ok = many.calls == 1 && many.status == 0 && many.n == EGRESS_LOOKUP_MAX_ADDRESSES &&
              strcmp(text, "11.0.0.1") == 0;
    return child_end(l, ok);
}

/* An answer of more private addresses than a lookup keeps, then a public one: the public one
 * is kept (first), not dropped for the cap, which would refuse a name that has one. */
static void
test_public_addresses_are_kept_first(void **state)
{
    (void) state;
    run_in_namespaces(many_child);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_unanswered_lookup_holds_nobody),
            cmocka_unit_test(test_hung_lookups_of_many_uids_hold_nobody),
            cmocka_unit_test(test_lookups_in_flight_are_bounded_per_uid),
            cmocka_unit_test(test_close_with_hung_lookups_returns_at_once),
            cmocka_unit_test(test_cancelled_lookup_leaves_the_others),
            cmocka_unit_test(test_aaaa_answers_are_checked_and_used),
            cmocka_unit_test(test_concurrent_lookups_use_their_own_source_ports),
            cmocka_unit_test(test_cancelled_hung_lookup_frees_its_fd_and_place),
            cmocka_unit_test(test_lookups_under_way_are_bounded_in_all),
            cmocka_unit_test(test_resolv_conf_is_read_per_lookup),
            cmocka_unit_test(test_only_the_first_name_servers_are_asked),
            cmocka_unit_test(test_public_addresses_are_kept_first),
    };
    struct pf_error *err = NULL;
    if (egress_global_init(&err) < 0)
        return 1;
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    egress_global_cleanup();
    return rc;
}
