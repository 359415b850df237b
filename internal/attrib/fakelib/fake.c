// A fake of the parts of libSystem, Core Foundation and IOKit that
// exopower's process-energy binding (internal/attrib/lib.go) calls, for
// its tests on Linux (binding_test.go, build tag attribfake). It holds the
// binding to what macOS expects of a caller, and aborts, naming the
// mistake, where a Mac would crash or quietly give wrong numbers:
//
// - libproc: proc_listpids of PROC_ALL_PIDS into a buffer of whole ints
//   (a full buffer means more processes: the caller must grow it);
//   proc_pidinfo of PROC_PIDUNIQIDENTIFIERINFO (56 bytes; a zombie only
//   with arg 1) and PROC_PIDCOALITIONINFO (40 bytes), the size exact;
//   proc_pid_rusage of RUSAGE_INFO_V6, whose 464 bytes the kernel writes
//   whole; coalition_info_resource_usage into a zeroed buffer at least
//   as large as macOS 15's struct (352 bytes), of which each kernel
//   copies only its own struct's size; waitid(P_PID, pid, info,
//   WEXITED|WNOWAIT), which leaves the child a zombie; for the whole
//   Mac's view, proc_pidinfo of PROC_PIDT_SHORTBSDINFO (64 bytes, any
//   user's process, a zombie only with arg 1), proc_pidpath into a buffer
//   of PROC_PIDPATHINFO_SIZE to _MAXSIZE bytes, and libquarantine's
//   responsibility_get_pid_responsible_for_pid. Every structure is
//   filled at macOS's offsets (XNU's bsd/sys/resource.h,
//   bsd/sys/proc_info.h, osfmk/mach/coalition.h, bsd/sys/signal.h), and
//   every word that exopower does not read holds a pattern of its own,
//   so that a field read at the wrong offset shows.
// - errno: macOS's numbers. A failure sets it, a success leaves a stale
//   one, so that a caller that reads it without a failure is caught; it
//   is read with fake_errno_word, which gives what purego's 8-byte load
//   of errno gives on macOS: the int and the 4 bytes after it.
// - Core Foundation's objects are reference counted: Create and Copy
//   return a reference the caller owns, Get does not. A release too many,
//   a call on a freed object, a NULL where Core Foundation would crash,
//   or an object of the wrong type aborts. So does any call into Core
//   Foundation or IOKit of a library loaded off the main thread.
// - IOKit's objects are counted: the tests hold fake_live_io to 0 after
//   every call, and fake_live_cf to the binding's own keys.
//
// Which Mac it is comes from FAKE_ATTRIB_CASE (see cases[] below); its
// processes' counters advance with each fake_tick, and fake_reap reaps a
// zombie as exopower's cmd.Wait does. The fake_* functions are for the
// tests, never for the binding.
//
// What it shares with the IOReport binding's fake (the abort, the main
// thread's check, Core Foundation's objects and calls, IOKit's objects)
// is in internal/fakemac/fakemac.h. Built by the test (fakemac.Build, from
// binding_test.go):
// gcc -shared -fPIC -I internal/fakemac -o libattribfake.so internal/attrib/fakelib/fake.c

#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// macOS's errno values (sys/errno.h).
#define D_EPERM 1
#define D_ENOENT 2
#define D_ESRCH 3
#define D_EINTR 4
#define D_ECHILD 10
#define D_ENOMEM 12
#define D_EINVAL 22
#define D_EAGAIN 35 // the stale errno a success leaves

#define PROC_ALL_PIDS 1
#define PROC_PIDUNIQIDENTIFIERINFO 17
#define PROC_PIDCOALITIONINFO 20
#define PROC_PIDT_SHORTBSDINFO 13
#define SHORTBSDINFO_SIZE 64
#define PATHINFO_SIZE 1024    // PROC_PIDPATHINFO_SIZE, MAXPATHLEN
#define PATHINFO_MAXSIZE 4096 // PROC_PIDPATHINFO_MAXSIZE
#define D_EOVERFLOW 84
#define RUSAGE_INFO_V6 6
#define RUSAGE_SIZE 464
#define COALITION_SIZE_15 352 // struct coalition_resource_usage on macOS 15
#define P_PID 1
#define WEXITED_WNOWAIT 0x24 // 0x4|0x20 on macOS
#define SIGINFO_SIZE 104
#define SINT64 4 // kCFNumberSInt64Type

// ---- what is its own among fakemac.h's objects

#define FAKE_NAME "fake libSystem"
#define FAKECF_KINDS NUMBER
#define FAKECF_KIND_NAMES "a CFNumber"
#define FAKECF_FIELDS int64_t num; // NUMBER
// An ITERATOR gives the accelerators, or with children set the clients of
// the accelerator acc; an ENTRY is the accelerator acc (client -1), or
// its client.
#define FAKEIO_FIELDS int children, acc, client;
#define FAKEIO_OBJECTS (1 << 16)
#define FAKEIO_CLASS "AGXAccelerator"
#include "fakemac.h"

static const unsigned long type_ids[] = {0, 7, 19, 18, 22}; // CFGetTypeID's answers, by kind

// ---- the Macs it can be

// A process. Its counters are base + step*t, t the ticks it has run:
// from born to now, or to its exit. binding_test.go knows the same
// tables.
typedef struct {
	int32_t pid;
	uint64_t id, parent;        // p_uniqueid, p_puniqueid
	int other_user;             // proc_pid_rusage says EPERM
	long born, exits, reaped;   // ticks: listed from born; a zombie from exits; gone from reaped (0: never)
	uint64_t start;             // ri_proc_start_abstime
	uint64_t energy, denergy;   // ri_energy_nj, nJ
	uint64_t penergy, dpenergy; // ri_penergy_nj
	uint64_t user, duser;       // ri_user_time, Mach
	uint64_t sys, dsys;         // ri_system_time, Mach
	uint64_t cuser, csys;       // ri_child_*_time before any child the table has is reaped, Mach
	uint64_t coalition;         // its resource coalition
	// What the whole Mac's view reads, in the "apps" case: its owner, its
	// short name (p_comm: 16 bytes at most, then no NUL), its executable's
	// path (NULL: none, as the kernel's own), and the pid responsible for
	// it (0: itself; -1: libquarantine names none).
	uint32_t uid;
	const char *comm, *path;
	int32_t responsible;
} fproc;

// A resource coalition. copy is how much of the struct its kernel copies.
typedef struct {
	uint64_t id;
	size_t copy;
	uint64_t started, exited;
	uint64_t energy, denergy, ane, dane, gpu, dgpu; // nJ
} fcoal;

#define MAC15 COALITION_SIZE_15
#define MAC14 0x130 // through conclave_mem
#define MAC12 0x118 // through pm_writes

static const fproc tree[] = {
	{.pid = 1, .id = 1, .parent = 0, .other_user = 1, .start = 1000, .energy = 9000000000000, .denergy = 1000000, .coalition = 1},
	{.pid = 88, .id = 88000, .parent = 1, .other_user = 1, .start = 2000, .energy = 70000000000, .denergy = 5000000, .coalition = 300},
	{.pid = 400, .id = 4000, .parent = 1, .start = 500000, .energy = 5000000000, .denergy = 40000000, .penergy = 3000000000, .dpenergy = 30000000,
	 .user = 240000000, .duser = 2400000, .sys = 24000000, .dsys = 240000, .cuser = 200000000000000000, .csys = 3, .coalition = 500},
	{.pid = 401, .id = 4001, .parent = 4000, .start = 600000, .energy = 20000000, .denergy = 10000, .penergy = 1000, .dpenergy = 10,
	 .user = 3000, .duser = 3, .sys = 300, .dsys = 0, .coalition = 500},
	{.pid = 500, .id = 5000, .parent = 4001, .start = 700000, .energy = 1000000, .denergy = 250000000, .penergy = 800000, .dpenergy = 200000000,
	 .user = 1001, .duser = 2400000, .sys = 2, .dsys = 240000, .coalition = 500},
	{.pid = 501, .id = 5001, .parent = 5000, .start = 700100, .energy = 300, .denergy = 7, .penergy = 0, .dpenergy = 0,
	 .user = 10, .duser = 1, .sys = 5, .dsys = 1, .coalition = 500},
	{.pid = 502, .id = 5002, .parent = 5001, .start = 700200, .energy = 123456789, .denergy = 1000001, .penergy = 23456789, .dpenergy = 1,
	 .user = 7, .duser = 7, .sys = 0, .dsys = 0, .coalition = 500}, // daemonised: its ppid is 1, its p_puniqueid still 501's
	{.pid = 503, .id = 5003, .parent = 5000, .other_user = 1, .start = 700300, .energy = 4, .denergy = 4, .coalition = 500}, // a sudo
};

static const fcoal tree_coals[] = {
	{.id = 500, .copy = MAC15, .started = 40, .exited = 12, .energy = 1000000000000, .denergy = 500000000, .ane = 300000000, .dane = 1000000, .gpu = 7000000000, .dgpu = 20000000},
	{.id = 300, .copy = MAC15, .started = 3, .exited = 0, .energy = 80000000000, .denergy = 6000000, .ane = 0, .dane = 0, .gpu = 90000000000, .dgpu = 300000000},
};

// The command (500), exopower's child, exits at the second tick and
// stays a zombie until the test reaps it; its child 501 exits and is
// reaped by it between the first two readings.
static const fproc exits[] = {
	{.pid = 450, .id = 4500, .parent = 4001, .start = 650000, .energy = 1, .denergy = 1, .coalition = 500}, // exopower
	{.pid = 500, .id = 5000, .parent = 4500, .exits = 2, .start = 700000, .energy = 1000, .denergy = 100, .penergy = 10, .dpenergy = 1,
	 .user = 300, .duser = 30, .sys = 30, .dsys = 3, .cuser = 6, .csys = 9, .coalition = 500},
	{.pid = 501, .id = 5001, .parent = 5000, .exits = 1, .reaped = 1, .start = 700100, .energy = 50, .denergy = 5,
	 .user = 600, .duser = 60, .sys = 90, .dsys = 9, .coalition = 500},
};

// Pid 600 ends at the first tick and another process has its pid.
static const fproc reuse[] = {
	{.pid = 600, .id = 6000, .parent = 4500, .exits = 1, .reaped = 1, .start = 111, .energy = 10, .denergy = 1, .coalition = 500},
	{.pid = 600, .id = 6100, .parent = 4500, .born = 1, .start = 222, .energy = 5, .denergy = 2, .coalition = 500},
};

// One process of this user's, for the kernels that lack something.
static const fproc one[] = {
	{.pid = 500, .id = 5000, .parent = 4500, .start = 700000, .energy = 1000, .denergy = 100, .penergy = 10, .dpenergy = 1, .user = 3, .duser = 3, .coalition = 500},
};
static const fproc one_vm[] = { // a virtual machine's kernel keeps no energy
	{.pid = 500, .id = 5000, .parent = 4500, .start = 700000, .user = 3, .duser = 3, .coalition = 500},
};
static const fcoal coals14[] = {
	{.id = 500, .copy = MAC14, .started = 5, .exited = 1, .energy = 2000, .denergy = 20, .ane = 777, .dane = 7, .gpu = 888, .dgpu = 8},
};
static const fcoal coals12[] = {
	{.id = 500, .copy = MAC12, .started = 5, .exited = 1, .energy = 2000, .denergy = 20, .ane = 777, .dane = 7, .gpu = 888, .dgpu = 8},
};

// The whole Mac, as its view of apps reads it: launchd and WindowServer,
// another user's; Safari and a helper of its (a comm of the full 16
// bytes, no NUL); a command run from Terminal; a process whose names are
// hostile (a title-setting escape, bytes that are not UTF-8); one whose
// path is the longest the kernel gives; a zombie; the kernel's own,
// with no path; one that libquarantine names no one responsible for.
static char long_path[PATHINFO_MAXSIZE]; // 4095 bytes and the NUL, filled when loaded
#define LONG_PATH long_path
static const fproc apps[] = {
	{.pid = 0, .id = 0, .other_user = 1, .uid = 0, .comm = "kernel_task", .path = NULL, .start = 1},
	{.pid = 1, .id = 1, .other_user = 1, .uid = 0, .comm = "launchd", .path = "/sbin/launchd", .start = 1000},
	{.pid = 88, .id = 88000, .parent = 1, .other_user = 1, .uid = 88, .comm = "WindowServer",
	 .path = "/System/Library/PrivateFrameworks/SkyLight.framework/Versions/A/Resources/WindowServer", .start = 2000},
	{.pid = 600, .id = 6000, .parent = 1, .uid = 501, .comm = "Safari", .path = "/Applications/Safari.app/Contents/MacOS/Safari", .start = 3000},
	{.pid = 601, .id = 6001, .parent = 1, .uid = 501, .comm = "com.apple.WebKi.",
	 .path = "/System/Library/Frameworks/WebKit.framework/Versions/A/XPCServices/com.apple.WebKit.WebContent.xpc/Contents/MacOS/com.apple.WebKit.WebContent",
	 .responsible = 600, .start = 3100},
	{.pid = 700, .id = 7000, .parent = 1, .uid = 501, .comm = "Terminal", .path = "/System/Applications/Utilities/Terminal.app/Contents/MacOS/Terminal", .start = 4000},
	{.pid = 702, .id = 7002, .parent = 7000, .uid = 501, .comm = "make", .path = "/usr/bin/make", .responsible = 700, .start = 4200},
	{.pid = 703, .id = 7003, .parent = 7002, .uid = 501, .comm = "\x1b]0;pwned\x07\xff\xfe", .path = "/tmp/\x1b[2J\xc3\x28\r\n\x9b", .responsible = 700, .start = 4300},
	{.pid = 704, .id = 7004, .parent = 7002, .uid = 501, .comm = "long", .path = LONG_PATH, .responsible = 700, .start = 4400},
	{.pid = 705, .id = 7005, .parent = 7002, .uid = 501, .comm = "cc", .path = "/usr/bin/cc", .responsible = 700, .exits = 1, .start = 4500},
	{.pid = 800, .id = 8000, .parent = 1, .uid = 502, .other_user = 1, .comm = "syncdefaultsd", .path = "/usr/libexec/syncdefaultsd", .responsible = -1, .start = 5000},
};

#define N(a) ((int)(sizeof a / sizeof a[0]))

typedef struct {
	const char *name;
	const fproc *procs;
	int nprocs;
	const fcoal *coals;
	int ncoals;
	const char *version, *chip;
	int pervasive; // kern.pervasive_energy; -1: no such name
	uint32_t numer, denom;
	int32_t child;  // exopower's child, which waitid waits for
	int eintr;      // waitid is interrupted once first
	int gpu;        // the GPU's clients of the table below; otherwise none
} fcase;

static const fcase cases[] = {
	{"tree", tree, N(tree), tree_coals, N(tree_coals), "15.5", "Apple M2 Pro", 1, 125, 3, 500, 0, 0},
	{"exits", exits, N(exits), tree_coals, 1, "15.5", "Apple M2 Pro", 1, 125, 3, 500, 1, 0},
	{"reuse", reuse, N(reuse), tree_coals, 1, "15.5", "Apple M2 Pro", 1, 125, 3, 0, 0, 0},
	{"mac14", one, N(one), coals14, N(coals14), "14.5", "Apple M3 Max", 1, 125, 3, 0, 0, 0},
	{"mac12", one, N(one), coals12, N(coals12), "12.7.6", "Apple M1", -1, 125, 3, 0, 0, 0},
	{"vm", one_vm, N(one_vm), coals14, N(coals14), "13.6.1", "Apple M2 (Virtual)", 0, 1, 1, 0, 0, 0},
	{"many", NULL, 0, NULL, 0, "15.5", "Apple M4", 1, 125, 3, 0, 0, 0}, // 3000 processes, an estimate of 60
	{"no-list", tree, N(tree), NULL, 0, "15.5", "Apple M4", 1, 125, 3, 0, 0, 0}, // proc_listpids fails
	{"gpu", tree, N(tree), NULL, 0, "15.5", "Apple M2 Pro", 1, 125, 3, 0, 0, 1},
	{"no-matching", tree, N(tree), NULL, 0, "15.5", "Apple M2 Pro", 1, 125, 3, 0, 0, 0}, // IOServiceMatching gives NULL
	{"apps", apps, N(apps), NULL, 0, "15.5", "Apple M3", 1, 125, 3, 0, 0, 0},
};
#define MANY 3000
#define MANY_FIRST 1000
#define MANY_GUESS 60

static const fcase *the_case = &cases[0];
static long tick;
static int test_reaped[16]; // reaped by fake_reap, by index in the case's table
static int interrupted;     // waitid was interrupted once
static long waiters;        // callers blocked in waitid
static long listpids_calls;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ticked = PTHREAD_COND_INITIALIZER;

static int is_case(const char *c) { return strcmp(the_case->name, c) == 0; }

__attribute__((constructor)) static void loaded(void) {
	memcpy(long_path, "/Users/someone/", 15);
	memset(long_path + 15, 'a', sizeof long_path - 16);
	long_path[sizeof long_path - 1] = 0;
	const char *c = getenv("FAKE_ATTRIB_CASE");
	if (c == NULL || *c == 0)
		return;
	for (int i = 0; i < N(cases); i++)
		if (strcmp(cases[i].name, c) == 0) {
			the_case = &cases[i];
			return;
		}
	die("FAKE_ATTRIB_CASE=%s is no case", c);
}

// ---- errno

// errno as macOS keeps it, per thread, with the 4 bytes after it.
static _Thread_local struct {
	int32_t err;
	uint32_t after;
} errword = {0, 0xdeadbeef};

static int fail(int e) {
	errword.err = e;
	return e;
}
static void ok(void) { errword.err = D_EAGAIN; }

// fake_errno_word is what purego's 8-byte load of *__error() gives on
// macOS after a call: errno, and above it the word's other 4 bytes.
uint64_t fake_errno_word(void) { return (uint64_t)errword.after << 32 | (uint32_t)errword.err; }

// ---- the process table

static void lock(void) { pthread_mutex_lock(&mu); }
static void unlock(void) { pthread_mutex_unlock(&mu); }

static int gone(int i) {
	const fproc *p = &the_case->procs[i];
	return test_reaped[i] || (p->reaped && tick >= p->reaped);
}
static int listed(int i) { return tick >= the_case->procs[i].born && !gone(i); }
static int zombie(const fproc *p) { return p->exits && tick >= p->exits; }
static uint64_t ran(const fproc *p) { return (uint64_t)((zombie(p) ? p->exits : tick) - p->born); }

// find is the listed process of the pid, or NULL.
static const fproc *find(int32_t pid) {
	for (int i = 0; i < the_case->nprocs; i++)
		if (the_case->procs[i].pid == pid && listed(i))
			return &the_case->procs[i];
	return NULL;
}

// child_time is ri_child_user_time (sys 0) or ri_child_system_time (sys
// 1): the table's own, and that of its children reaped, theirs included.
static uint64_t child_time(const fproc *p, int sys) {
	uint64_t t = sys ? p->csys : p->cuser;
	for (int i = 0; i < the_case->nprocs; i++) {
		const fproc *q = &the_case->procs[i];
		if (q->parent == p->id && q->reaped && tick >= q->reaped)
			t += (sys ? q->sys + q->dsys * ran(q) : q->user + q->duser * ran(q)) + child_time(q, sys);
	}
	return t;
}

// ---- libproc

int proc_listpids(uint32_t type, uint32_t typeinfo, void *buf, int bufsize) {
	if (type != PROC_ALL_PIDS || typeinfo != 0)
		die("proc_listpids: type %u, typeinfo %u; exopower lists every process (PROC_ALL_PIDS, 0)", type, typeinfo);
	if (buf != NULL && (bufsize <= 0 || bufsize % 4 != 0))
		die("proc_listpids: a buffer of %d bytes, not a whole number of pids", bufsize);
	lock();
	listpids_calls++;
	int n = 0, w = 0, room = bufsize / 4;
	if (is_case("no-list")) {
		unlock();
		fail(D_ENOMEM);
		return 0; // libproc's wrapper turns the kernel's -1 into 0
	}
	if (is_case("many")) {
		n = MANY;
		for (int i = 0; buf != NULL && i < MANY && w < room; i++)
			((int32_t *)buf)[w++] = MANY_FIRST + i;
	} else {
		for (int i = 0; i < the_case->nprocs; i++)
			if (listed(i)) {
				n++;
				if (buf != NULL && w < room)
					((int32_t *)buf)[w++] = the_case->procs[i].pid;
			}
	}
	unlock();
	ok();
	if (buf == NULL) // the kernel's estimate: the processes then, and 20
		return ((is_case("many") ? MANY_GUESS : n) + 20) * 4;
	return w * 4;
}

// pidinfo_fill writes a flavor's structure, every word a pattern first.
static void pidinfo_fill(const fproc *p, int flavor, uint64_t *w, int size) {
	for (int i = 0; i < size / 8; i++)
		w[i] = 0x1d00000000000000u | (uint64_t)i << 8 | (uint64_t)flavor;
	if (flavor == PROC_PIDUNIQIDENTIFIERINFO) {
		w[2] = p->id;     // p_uniqueid at 16
		w[3] = p->parent; // p_puniqueid at 24
		return;
	}
	if (flavor == PROC_PIDT_SHORTBSDINFO) {
		// struct proc_bsdshortinfo: pid, ppid, pgid, status, then
		// pbsi_comm[MAXCOMLEN] at 16, flags at 32, uid at 36, gid and
		// the real and saved ids after.
		unsigned char *b = (unsigned char *)w;
		uint32_t pid = (uint32_t)p->pid, status = zombie(p) ? 5 /* SZOMB */ : 2 /* SRUN */;
		memcpy(b, &pid, 4);
		memcpy(b + 12, &status, 4);
		memset(b + 16, 0, 16);
		memcpy(b + 16, p->comm, strnlen(p->comm, 16)); // p_comm holds 16 at most: no NUL then
		memcpy(b + 36, &p->uid, 4);
		return;
	}
	w[0] = p->coalition;     // coalition_id[COALITION_TYPE_RESOURCE] at 0
	w[1] = p->coalition + 1; // the jetsam coalition's at 8
}

int proc_pidinfo(int pid, int flavor, uint64_t arg, void *buf, int size) {
	if (buf == NULL)
		die("proc_pidinfo: NULL buffer");
	int want = flavor == PROC_PIDUNIQIDENTIFIERINFO ? 56 : flavor == PROC_PIDCOALITIONINFO ? 40 : flavor == PROC_PIDT_SHORTBSDINFO ? SHORTBSDINFO_SIZE : 0;
	if (want == 0)
		die("proc_pidinfo: flavor %d, none of PROC_PIDT_SHORTBSDINFO (13), PROC_PIDUNIQIDENTIFIERINFO (17) and PROC_PIDCOALITIONINFO (20)", flavor);
	if (size != want)
		die("proc_pidinfo: flavor %d with %d bytes, where its structure is %d", flavor, size, want);
	lock();
	const fproc *p = find(pid);
	// A zombie is found only with arg set, and has no coalition.
	if (p == NULL || (zombie(p) && (flavor == PROC_PIDCOALITIONINFO || arg == 0))) {
		unlock();
		fail(D_ESRCH);
		return 0;
	}
	uint64_t w[8];
	pidinfo_fill(p, flavor, w, size);
	memcpy(buf, w, size);
	unlock();
	ok();
	return size;
}

// proc_pidpath is libproc's: the path's length, or 0 and errno, as
// PROC_PIDPATHINFO gives it. The kernel's own process has no path; a
// zombie is not found.
int proc_pidpath(int pid, void *buf, uint32_t size) {
	if (buf == NULL)
		die("proc_pidpath: NULL buffer");
	if (size < PATHINFO_SIZE)
		return fail(D_ENOMEM), 0;
	if (size > PATHINFO_MAXSIZE)
		return fail(D_EOVERFLOW), 0;
	lock();
	const fproc *p = find(pid);
	if (p == NULL || zombie(p) || p->path == NULL) {
		unlock();
		fail(D_ESRCH);
		return 0;
	}
	size_t n = strlen(p->path);
	if (n >= size)
		die("proc_pidpath: a path of %zu bytes does not fit %u", n, size);
	// The kernel writes the path and its NUL; the rest of the buffer is
	// left as it was.
	memcpy(buf, p->path, n + 1);
	unlock();
	ok();
	return (int)n;
}

// responsibility_get_pid_responsible_for_pid is libquarantine's: the pid
// of the process responsible for pid, pid itself when none other is, -1
// when it names none (no such process, or none recorded).
int32_t responsibility_get_pid_responsible_for_pid(int32_t pid) {
	lock();
	const fproc *p = find(pid);
	int32_t r = p == NULL ? -1 : p->responsible == 0 ? pid : p->responsible;
	unlock();
	return r;
}

// rusage_fill writes struct rusage_info_v6 (bsd/sys/resource.h).
static void rusage_fill(const fproc *p, uint64_t *w) {
	for (int i = 0; i < RUSAGE_SIZE / 8; i++)
		w[i] = 0x5a00000000000000u | (uint64_t)i << 8;
	uint64_t t = ran(p);
	w[0x10 / 8] = p->user + p->duser * t;
	w[0x18 / 8] = p->sys + p->dsys * t;
	w[0x48 / 8] = zombie(p) ? 0 : w[0x48 / 8]; // ri_phys_footprint: 0 in a zombie's record
	w[0x50 / 8] = p->start;
	w[0x58 / 8] = zombie(p) ? p->start + 1000 * (uint64_t)p->exits : 0;
	w[0x60 / 8] = child_time(p, 0);
	w[0x68 / 8] = child_time(p, 1);
	w[0x150 / 8] = p->energy + p->denergy * t;
	w[0x158 / 8] = p->penergy + p->dpenergy * t;
}

int proc_pid_rusage(int pid, int flavor, void *buf) {
	if (buf == NULL)
		die("proc_pid_rusage: NULL buffer");
	if (flavor != RUSAGE_INFO_V6)
		die("proc_pid_rusage: flavor %d, not RUSAGE_INFO_V6 (6), whose buffer is %d bytes", flavor, RUSAGE_SIZE);
	lock();
	const fproc *p = find(pid);
	int e = p == NULL ? D_ESRCH : p->other_user ? D_EPERM : is_case("mac12") ? D_EINVAL : 0;
	if (e != 0) {
		unlock();
		fail(e);
		return -1;
	}
	uint64_t w[RUSAGE_SIZE / 8];
	rusage_fill(p, w);
	memcpy(buf, w, sizeof w); // the kernel writes the whole structure
	unlock();
	ok();
	return 0;
}

// coalition_fill writes struct coalition_resource_usage (macOS 15's,
// osfmk/mach/coalition.h).
static void coalition_fill(const fcoal *c, uint64_t *w) {
	for (int i = 0; i < COALITION_SIZE_15 / 8; i++)
		w[i] = 0xc000000000000000u | (uint64_t)i << 8;
	w[0x00 / 8] = c->started;
	w[0x08 / 8] = c->exited;
	w[0x58 / 8] = c->energy + c->denergy * (uint64_t)tick;
	w[0x138 / 8] = c->ane + c->dane * (uint64_t)tick;
	w[0x148 / 8] = c->gpu + c->dgpu * (uint64_t)tick;
}

int coalition_info_resource_usage(uint64_t cid, void *cru, size_t sz) {
	if (cru == NULL)
		die("coalition_info_resource_usage: NULL buffer");
	if (sz < COALITION_SIZE_15)
		die("coalition_info_resource_usage: %zu bytes, fewer than macOS 15's structure (%d): its GPU energy would be cut", sz, COALITION_SIZE_15);
	// The kernel copies its own structure's size and leaves the rest: a
	// buffer not zeroed would keep what an earlier call left there.
	for (size_t i = 0; i < sz; i++)
		if (((unsigned char *)cru)[i] != 0)
			die("coalition_info_resource_usage: the buffer is not zeroed (byte %zu), and a kernel older than the fields exopower reads leaves them as they are", i);
	lock();
	for (int i = 0; i < the_case->ncoals; i++) {
		const fcoal *c = &the_case->coals[i];
		if (c->id == cid) {
			uint64_t w[COALITION_SIZE_15 / 8];
			coalition_fill(c, w);
			memcpy(cru, w, c->copy);
			unlock();
			ok();
			return 0;
		}
	}
	unlock();
	fail(D_ESRCH);
	return -1;
}

// waitid's siginfo_t on darwin/arm64 (bsd/sys/signal.h).
typedef struct {
	int32_t signo, err, code, pid, uid, status;
	uint64_t addr, value, band;
	uint64_t pad[7];
} siginfo;
_Static_assert(sizeof(siginfo) == SIGINFO_SIZE, "siginfo_t is 104 bytes");

static int childs_index(int32_t pid) {
	for (int i = 0; i < the_case->nprocs; i++)
		if (the_case->procs[i].pid == pid && listed(i))
			return i;
	return -1;
}

int waitid(int idtype, uint32_t id, void *info, int options) {
	if (idtype != P_PID)
		die("waitid: idtype %d, not P_PID (1)", idtype);
	if (options != WEXITED_WNOWAIT)
		die("waitid: options %#x, not WEXITED|WNOWAIT (0x24): anything else reaps the child, or returns before it exits", options);
	if (info == NULL)
		die("waitid: NULL siginfo_t");
	lock();
	int i = childs_index((int32_t)id);
	if (i < 0 || (int32_t)id != the_case->child) {
		unlock();
		fail(D_ECHILD);
		return -1;
	}
	if (the_case->eintr && !interrupted) {
		interrupted = 1;
		unlock();
		fail(D_EINTR);
		return -1;
	}
	waiters++;
	while (!zombie(&the_case->procs[i]) && !gone(i))
		pthread_cond_wait(&ticked, &mu);
	waiters--;
	siginfo si = {.signo = 20 /* SIGCHLD */, .code = 1 /* CLD_EXITED */, .pid = (int32_t)id, .uid = 501};
	int reaped = gone(i);
	unlock();
	if (reaped) {
		fail(D_ECHILD);
		return -1;
	}
	memcpy(info, &si, sizeof si);
	ok();
	return 0;
}

int mach_timebase_info(uint32_t *tb) {
	if (tb == NULL)
		die("mach_timebase_info: NULL");
	tb[0] = the_case->numer;
	tb[1] = the_case->denom;
	ok();
	return 0;
}

// sysctlbyname reads the case's kern.osproductversion,
// machdep.cpu.brand_string and kern.pervasive_energy.
int sysctlbyname(const char *name, void *old, size_t *oldlen, void *new, size_t newlen) {
	if (name == NULL || oldlen == NULL)
		die("sysctlbyname: NULL name or length");
	if (new != NULL || newlen != 0)
		die("sysctlbyname(%s): a write, where exopower only reads", name);
	const void *v = NULL;
	size_t size = 0;
	int32_t pervasive = the_case->pervasive;
	if (strcmp(name, "kern.osproductversion") == 0)
		v = the_case->version, size = strlen(the_case->version) + 1;
	else if (strcmp(name, "machdep.cpu.brand_string") == 0)
		v = the_case->chip, size = strlen(the_case->chip) + 1;
	else if (strcmp(name, "kern.pervasive_energy") == 0 && pervasive >= 0)
		v = &pervasive, size = sizeof pervasive;
	if (v == NULL)
		return fail(D_ENOENT), -1;
	if (old != NULL) {
		if (*oldlen < size)
			return fail(D_ENOMEM), -1;
		memcpy(old, v, size);
	}
	*oldlen = size;
	ok();
	return 0;
}

// ---- Core Foundation, beside fakemac.h's

static obj *number(int64_t v) {
	obj *o = make(NUMBER);
	o->num = v;
	return o;
}

unsigned long CFGetTypeID(const void *cf) { return type_ids[use(cf, ANY, __func__)->kind]; }
unsigned long CFStringGetTypeID(void) { return type_ids[STRING]; }
unsigned long CFArrayGetTypeID(void) { return type_ids[ARRAY]; }
unsigned long CFDictionaryGetTypeID(void) { return type_ids[DICT]; }
unsigned long CFNumberGetTypeID(void) { return type_ids[NUMBER]; }

unsigned char CFNumberGetValue(const void *n, long type, void *out) {
	obj *o = use(n, NUMBER, __func__);
	if (type != SINT64)
		die("%s: type %ld, not kCFNumberSInt64Type (4), the 8 bytes exopower reads", __func__, type);
	if (out == NULL)
		die("%s: NULL out", __func__);
	memcpy(out, &o->num, sizeof o->num);
	return 1;
}

// ---- the IORegistry: the GPU and its clients

// What a client's AppUsage holds, entry by entry.
enum entry { END, TIME, TIME_API, NOT_DICT, NO_TIME, TIME_STRING };
// What its properties are.
enum creator { CREATOR_NONE, CREATOR_STRING, CREATOR_NUMBER };
enum usage { USAGE_NONE, USAGE_ARRAY, USAGE_DICT };

typedef struct {
	int acc; // the accelerator it is a child of
	const char *class;
	enum creator creator_kind;
	const char *creator;
	enum usage usage_kind;
	struct {
		enum entry kind;
		int64_t base, step; // accumulatedGPUTime, ns, per tick
	} entries[5];
} fclient;

// Two accelerators, the second with one client; pid 500's time is summed
// over its three clients, and the clients that cannot be read are passed
// over. binding_test.go knows the sums.
static const fclient clients[] = {
	{0, "AGXDeviceUserClient", CREATOR_STRING, "pid 500, cmd", USAGE_ARRAY, {{TIME, 1000, 100}, {TIME_API, 20, 2}}},
	{0, "AGXDeviceUserClient", CREATOR_STRING, "pid 500, cmd", USAGE_ARRAY, {{TIME, 300, 30}}},
	{0, "AGXDeviceUserClient", CREATOR_STRING, "pid 88, WindowServer", USAGE_ARRAY, {{TIME, 5000000, 1000}}},
	{0, "IOAccelSharedUserClient2", CREATOR_STRING, "pid 77, other", USAGE_ARRAY, {{TIME, 999, 9}}},     // not a device client
	{0, "AGXDeviceUserClient", CREATOR_STRING, "kernel_task", USAGE_ARRAY, {{TIME, 999, 9}}},            // no pid
	{0, "AGXDeviceUserClient", CREATOR_STRING, "pid 12a, z", USAGE_ARRAY, {{TIME, 999, 9}}},             // no pid
	{0, "AGXDeviceUserClient", CREATOR_STRING, "pid 501, child", USAGE_DICT, {{TIME, 999, 9}}},          // not an array
	{0, "AGXDeviceUserClient", CREATOR_NUMBER, "pid 401, shell", USAGE_ARRAY, {{TIME, 999, 9}}},         // not a string
	{0, "AGXDeviceUserClient", CREATOR_STRING, "pid 503, sudo", USAGE_NONE, {{END, 0, 0}}},              // no AppUsage
	{0, "AGXDeviceUserClient", CREATOR_NONE, NULL, USAGE_ARRAY, {{TIME, 999, 9}}},                       // no creator
	{0, "AGXDeviceUserClient", CREATOR_STRING, "pid 502, daemon", USAGE_ARRAY,
	 {{NOT_DICT, 0, 0}, {NO_TIME, 0, 0}, {TIME_STRING, 999, 9}, {TIME, 7, 1}}},
	{1, "AGXDeviceUserClient", CREATOR_STRING, "pid 500, cmd", USAGE_ARRAY, {{TIME, 50, 0}}},
};
#define NACCS 2

uint32_t IOIteratorNext(uint32_t it) {
	ioobj *o = iouse(it, ITERATOR, __func__);
	int naccs = the_case->gpu ? NACCS : 0;
	if (!o->children)
		return o->next < naccs ? ionew((ioobj){.kind = ENTRY, .acc = o->next++, .client = -1}) : 0;
	for (; o->next < N(clients); o->next++)
		if (clients[o->next].acc == o->acc)
			return ionew((ioobj){.kind = ENTRY, .acc = o->acc, .client = o->next++});
	return 0;
}

int32_t IORegistryEntryGetChildIterator(uint32_t entry, const char *plane, uint32_t *it) {
	ioobj *e = iouse(entry, ENTRY, __func__);
	if (plane == NULL || strcmp(plane, "IOService") != 0)
		die("%s: plane %s, not IOService", __func__, plane ? plane : "NULL");
	if (it == NULL)
		die("%s: no place for the iterator", __func__);
	if (e->client >= 0)
		die("%s: the children of a client, not of the GPU", __func__);
	*it = ionew((ioobj){.kind = ITERATOR, .children = 1, .acc = e->acc});
	return 0;
}

int32_t IOObjectGetClass(uint32_t object, char name[128]) {
	ioobj *e = iouse(object, 0, __func__);
	if (name == NULL)
		die("%s: no buffer", __func__);
	if (e->kind != ENTRY)
		strcpy(name, "IOUserIterator");
	else
		strcpy(name, e->client < 0 ? "AGXAcceleratorG14X" : clients[e->client].class);
	return 0;
}

// app_usage is a client's AppUsage as the registry gives it, at this tick.
static obj *app_usage(const fclient *c) {
	int n = 0;
	while (n < 5 && c->entries[n].kind != END)
		n++;
	obj *a = array(n);
	for (int i = 0; i < n; i++) {
		int64_t v = c->entries[i].base + c->entries[i].step * tick;
		switch (c->entries[i].kind) {
		case TIME:
			a->items[i] = dict("accumulatedGPUTime", number(v), NULL, NULL);
			break;
		case TIME_API:
			a->items[i] = dict("API", string("Metal"), "accumulatedGPUTime", number(v));
			break;
		case NOT_DICT:
			a->items[i] = string("accumulatedGPUTime");
			break;
		case NO_TIME:
			a->items[i] = dict("API", string("OpenCL"), NULL, NULL);
			break;
		default: // TIME_STRING
			a->items[i] = dict("accumulatedGPUTime", string("999"), NULL, NULL);
		}
	}
	if (c->usage_kind == USAGE_DICT)
		return dict("AppUsage", a, NULL, NULL);
	return a;
}

const void *IORegistryEntryCreateCFProperty(uint32_t entry, const void *key, const void *alloc, uint32_t options) {
	ioobj *e = iouse(entry, ENTRY, __func__);
	obj *k = use(key, STRING, __func__);
	if (alloc != NULL || options != 0)
		die("%s: allocator or options other than the default and 0", __func__);
	if (e->client < 0)
		return NULL;
	lock();
	const fclient *c = &clients[e->client];
	obj *v = NULL;
	if (strcmp(k->str, "IOUserClientCreator") == 0 && c->creator_kind == CREATOR_STRING)
		v = string(c->creator);
	else if (strcmp(k->str, "IOUserClientCreator") == 0 && c->creator_kind == CREATOR_NUMBER)
		v = number(401);
	else if (strcmp(k->str, "AppUsage") == 0 && c->usage_kind != USAGE_NONE)
		v = app_usage(c);
	unlock();
	return v;
}

// ---- for the tests

// fake_tick advances the processes' counters, and wakes waitid.
void fake_tick(void) {
	lock();
	tick++;
	pthread_cond_broadcast(&ticked);
	unlock();
}

// fake_reap reaps a zombie, as exopower's cmd.Wait does; 0 if pid is none.
int fake_reap(int32_t pid) {
	lock();
	int i = childs_index(pid), done = 0;
	if (i >= 0 && zombie(&the_case->procs[i]) && i < N(test_reaped)) {
		test_reaped[i] = done = 1;
		pthread_cond_broadcast(&ticked);
	}
	unlock();
	return done;
}

long fake_waiters(void) {
	lock();
	long n = waiters;
	unlock();
	return n;
}
long fake_listpids_calls(void) {
	lock();
	long n = listpids_calls;
	unlock();
	return n;
}
