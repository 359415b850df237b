// A fake of the parts of Core Foundation, libIOReport, IOKit and libSystem
// that exopower's IOReport binding (internal/ioreport/lib.go) calls, for
// its tests on Linux (binding_test.go, build tag ioreportfake). It holds
// the binding to what macOS's libraries expect of a caller and crashes
// loudly where they would crash or misbehave:
//
// - Core Foundation's objects are reference counted: Create and Copy
//   return a reference the caller owns, Get does not; an object's last
//   release frees it and releases what it holds. A release too many, a
//   call on a freed object, a NULL where Core Foundation would crash, an
//   object of the wrong type, or any use of a library loaded off the main
//   thread aborts, naming it.
// - Strings are UTF-8 (kCFStringEncodingUTF8), the group "Energy Model",
//   the subscription's channels a mutable copy.
// - The SMC is AppleSMC's protocol: selector 2, 80-byte structures in and
//   out, the key PSTR, key info (command 9) before its bytes (command 5),
//   with the type and size that key info gave passed back; the task port
//   mach_task_self's. IOKit's objects and connections are counted.
//
// Which Mac it is comes from FAKE_IOREPORT_CASE (see cases[] below). The
// fake_* functions are for the tests, never for the binding: what is
// still alive, and how often each channel was read.
//
// Built by the test: gcc -shared -fPIC -o libfake.so fake.c

#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UTF8 0x08000100u       // kCFStringEncodingUTF8
#define TASK 0x203u            // the port mach_task_self gives
#define PSTR 0x50535452u       // 'PSTR'
#define FLT 0x666c7420u        // 'flt '
#define NOT_PERMITTED 0xe00002e2u // kIOReturnNotPermitted
#define KEY_MISSING 132        // the SMC's result for a key it has not

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	fputs("fake IOReport: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

// ---- the Mac it is

// The fake's Energy Model group. A channel's counter at the k-th sample
// (k from 0) is base + step*k. binding_test.go knows the same table.
static const struct {
	const char *subgroup, *name, *unit;
	int64_t base, step;
} chans[] = {
	{"", "EACC_CPU", "mJ", 200, 2},
	{"", "CPU Energy", "mJ", 1000, 7},
	{"", "GPU0", "mJ", 4, 1},
	{"", "GPU Energy", "nJ", 5000000000, 123456789},
	{NULL, "ISP", "mJ", 0, 5}, // no subgroup: IOReport gives NULL
	{"", "ANE", "mJ", 30, 3},
	{"", "DRAM", "mJ", 600, 11},
	{"", "PCIe Port 0 Energy", "uJ", 70, 13},
};
#define NCHANS ((int)(sizeof chans / sizeof chans[0]))
#define NULL_CHANNEL 3 // GPU Energy, which a stream reads
#define NOT_SIMPLE 4   // ISP

// The cases. A case ending in -later applies from the second sample on:
// the subscription's own sample is whole.
static const char *cases[] = {
	"mac",           // a Mac: the channels above, PSTR 42.5 W
	"no-group",      // IOReportCopyChannelsInGroup gives NULL
	"no-copy",       // CFDictionaryCreateMutableCopy gives NULL
	"no-subscription", // IOReportCreateSubscription gives NULL
	"no-samples",    // IOReportCreateSamples gives NULL
	"no-key",        // a sample without "IOReportChannels"
	"null-channel",  // a sample's array holds NULL for a channel
	"fewer",         // a sample with a channel fewer
	"no-matching",   // IOServiceMatching gives NULL
	"no-smc",        // no AppleSMC service
	"smc-refuses",   // IOServiceOpen fails
	"pstr-zero",     // PSTR reads 0 W
	"no-simple",     // a channel with no simple value (INT64_MIN)
};
static char the_case[64] = "mac";
static int later;   // the case applies from the second sample on
static int on_main; // loaded on the process's main thread
static long samples; // samples made so far

// is_case says whether the case is c, and applies now.
static int is_case(const char *c) { return strcmp(the_case, c) == 0 && (!later || samples > 0); }

__attribute__((constructor)) static void loaded(void) {
	on_main = syscall(SYS_gettid) == getpid();
	const char *c = getenv("FAKE_IOREPORT_CASE");
	if (c == NULL || *c == 0)
		return;
	size_t n = strlen(c);
	later = n > 6 && strcmp(c + n - 6, "-later") == 0;
	if (later)
		n -= 6;
	if (n >= sizeof the_case)
		die("FAKE_IOREPORT_CASE=%s is no case", c);
	memcpy(the_case, c, n);
	the_case[n] = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (strcmp(cases[i], the_case) == 0)
			return;
	die("FAKE_IOREPORT_CASE=%s is no case", c);
}

// enter is the start of every call: Core Foundation must have been
// initialised, that is loaded, on the main thread.
static void enter(const char *fn) {
	if (!on_main)
		die("%s: the library was loaded off the main thread; Core Foundation must be initialised on the main thread", fn);
}

// ---- Core Foundation's objects

enum kind { ANY, STRING, ARRAY, DICT, CHANNEL, SUBSCRIPTION };
static const char *kinds[] = {"an object", "a CFString", "a CFArray", "a CFDictionary", "an IOReport channel", "an IOReport subscription"};
#define MAGIC 0x43464f42u

typedef struct obj obj;
struct obj {
	uint32_t magic;
	enum kind kind;
	long refs; // 0: freed, kept so that a later use is told
	char *str;                      // STRING
	obj **items;                    // ARRAY: n items; DICT: n keys, then n values
	long n;
	int mutable, samples;           // DICT: a mutable copy; ARRAY: a sample's channels
	obj *group, *subgroup, *name, *unit; // CHANNEL
	int index;
	int64_t value;
	obj *desired; // SUBSCRIPTION
};

static long live_cf; // objects alive

static obj *make(enum kind k) {
	obj *o = calloc(1, sizeof *o);
	if (o == NULL)
		die("out of memory");
	o->magic = MAGIC;
	o->kind = k;
	o->refs = 1;
	live_cf++;
	return o;
}

// use checks that p is a live object of kind k, as fn needs it.
static obj *use(const void *p, enum kind k, const char *fn) {
	enter(fn);
	obj *o = (obj *)p;
	if (o == NULL)
		die("%s: NULL where %s belongs (Core Foundation would crash)", fn, kinds[k]);
	if (o->magic != MAGIC)
		die("%s: %p is no Core Foundation object", fn, p);
	if (o->refs <= 0)
		die("%s: %s used after it was freed (released once too often, or used after its last release)", fn, kinds[o->kind]);
	if (k != ANY && o->kind != k)
		die("%s: %s where %s belongs", fn, kinds[o->kind], kinds[k]);
	return o;
}

static obj *retain(obj *o) {
	if (o != NULL)
		o->refs++;
	return o;
}

static void release(obj *o) {
	if (o == NULL || --o->refs > 0)
		return;
	live_cf--;
	long n = o->kind == DICT ? 2 * o->n : o->n;
	for (long i = 0; i < n; i++)
		release(o->items[i]);
	release(o->group);
	release(o->subgroup);
	release(o->name);
	release(o->unit);
	release(o->desired);
}

static obj *string(const char *s) {
	obj *o = make(STRING);
	o->str = strdup(s);
	return o;
}

static obj *array(long n) {
	obj *o = make(ARRAY);
	o->items = calloc(n + 1, sizeof(obj *));
	o->n = n;
	return o;
}

// dict1 is a dictionary of one key, which takes over value.
static obj *dict1(const char *key, obj *value) {
	obj *o = make(DICT);
	o->items = calloc(2, sizeof(obj *));
	o->n = 1;
	o->items[0] = string(key);
	o->items[1] = value;
	return o;
}

// channels are the group's channels as IOReport gives them, each with its
// counter at sample k, or the value of none (-1).
static obj *channels(long k) {
	int n = is_case("fewer") ? NCHANS - 1 : NCHANS;
	obj *a = array(n);
	a->samples = k >= 0;
	for (int i = 0; i < n; i++) {
		if (k >= 0 && is_case("null-channel") && i == NULL_CHANNEL)
			continue;
		obj *c = make(CHANNEL);
		c->group = string("Energy Model");
		c->subgroup = chans[i].subgroup ? string(chans[i].subgroup) : NULL;
		c->name = string(chans[i].name);
		c->unit = string(chans[i].unit);
		c->index = i;
		c->value = k < 0 ? 0 : chans[i].base + chans[i].step * k;
		if (k >= 0 && is_case("no-simple") && i == NOT_SIMPLE)
			c->value = INT64_MIN;
		a->items[i] = c;
	}
	return a;
}

// ---- Core Foundation

const void *CFStringCreateWithCString(const void *alloc, const char *s, uint32_t encoding) {
	enter(__func__);
	if (alloc != NULL)
		die("%s: an allocator other than the default", __func__);
	if (s == NULL)
		die("%s: NULL string (Core Foundation would crash)", __func__);
	if (encoding != UTF8)
		die("%s: encoding %#x, not kCFStringEncodingUTF8 (0x08000100)", __func__, encoding);
	return string(s);
}

unsigned char CFStringGetCString(const void *s, char *buf, long size, uint32_t encoding) {
	obj *o = use(s, STRING, __func__);
	if (buf == NULL || size <= 0)
		die("%s: no buffer", __func__);
	if (encoding != UTF8)
		die("%s: encoding %#x, not kCFStringEncodingUTF8 (0x08000100)", __func__, encoding);
	if ((long)strlen(o->str) + 1 > size)
		return 0;
	strcpy(buf, o->str);
	return 1;
}

static long index_calls[NCHANS], value_calls[NCHANS];

long CFArrayGetCount(const void *a) { return use(a, ARRAY, __func__)->n; }

const void *CFArrayGetValueAtIndex(const void *a, long i) {
	obj *o = use(a, ARRAY, __func__);
	if (i < 0 || i >= o->n)
		die("%s: index %ld of an array of %ld (Core Foundation would crash)", __func__, i, o->n);
	if (o->samples)
		index_calls[i]++;
	return o->items[i];
}

const void *CFDictionaryGetValue(const void *d, const void *key) {
	obj *o = use(d, DICT, __func__);
	obj *k = use(key, STRING, __func__);
	for (long i = 0; i < o->n; i++)
		if (strcmp(o->items[i]->str, k->str) == 0)
			return o->items[o->n + i];
	return NULL;
}

long CFDictionaryGetCount(const void *d) { return use(d, DICT, __func__)->n; }

const void *CFDictionaryCreateMutableCopy(const void *alloc, long capacity, const void *d) {
	obj *o = use(d, DICT, __func__);
	if (alloc != NULL)
		die("%s: an allocator other than the default", __func__);
	if (capacity != 0 && capacity < o->n)
		die("%s: capacity %ld below the %ld entries", __func__, capacity, o->n);
	if (is_case("no-copy"))
		return NULL;
	obj *c = make(DICT);
	c->items = calloc(2 * o->n + 1, sizeof(obj *));
	c->n = o->n;
	c->mutable = 1;
	for (long i = 0; i < 2 * o->n; i++)
		c->items[i] = retain(o->items[i]);
	return c;
}

void CFRelease(const void *cf) {
	if (cf == NULL)
		die("CFRelease(NULL) (Core Foundation crashes)");
	release(use(cf, ANY, __func__));
}

// ---- IOReport

const void *IOReportCopyChannelsInGroup(const void *group, const void *subgroup, uint64_t a, uint64_t b, uint64_t c) {
	obj *g = use(group, STRING, __func__);
	if (strcmp(g->str, "Energy Model") != 0)
		die("%s: group %s, not Energy Model", __func__, g->str);
	if (subgroup != NULL)
		die("%s: a subgroup, where exopower reads the whole group", __func__);
	if (a || b || c)
		die("%s: arguments %lu, %lu, %lu, not 0", __func__, a, b, c);
	if (is_case("no-group"))
		return NULL;
	return dict1("IOReportChannels", channels(-1));
}

const void *IOReportCreateSubscription(const void *a, const void *desired, const void **subscribed, uint64_t id, const void *b) {
	obj *d = use(desired, DICT, __func__);
	if (a != NULL || b != NULL || id != 0)
		die("%s: arguments other than NULL and 0", __func__);
	if (!d->mutable)
		die("%s: the channels are not a mutable dictionary (IOReport changes them)", __func__);
	if (subscribed == NULL)
		die("%s: no place for the subscribed channels", __func__);
	if (is_case("no-subscription"))
		return NULL;
	obj *s = make(SUBSCRIPTION);
	s->desired = retain(d);
	*subscribed = dict1("IOReportChannels", channels(-1));
	return s;
}

const void *IOReportCreateSamples(const void *sub, const void *desired, const void *b) {
	use(sub, SUBSCRIPTION, __func__);
	use(desired, DICT, __func__);
	if (b != NULL)
		die("%s: a third argument other than NULL", __func__);
	if (is_case("no-samples"))
		return NULL;
	obj *a = channels(samples);
	obj *d = is_case("no-key") ? dict1("IOReportOtherKey", a) : dict1("IOReportChannels", a);
	samples++;
	return d;
}

const void *IOReportChannelGetGroup(const void *ch) { return use(ch, CHANNEL, __func__)->group; }
const void *IOReportChannelGetSubGroup(const void *ch) { return use(ch, CHANNEL, __func__)->subgroup; }
const void *IOReportChannelGetChannelName(const void *ch) { return use(ch, CHANNEL, __func__)->name; }
const void *IOReportChannelGetUnitLabel(const void *ch) { return use(ch, CHANNEL, __func__)->unit; }

int64_t IOReportSimpleGetIntegerValue(const void *ch, int32_t *unused) {
	(void)unused;
	obj *c = use(ch, CHANNEL, __func__);
	value_calls[c->index]++;
	return c->value;
}

// ---- IOKit and the SMC

enum iokind { ITERATOR = 1, SERVICE };
static struct {
	enum iokind kind;
	long refs;
	int keys; // SERVICE: AppleSMCKeysEndpoint, which has PSTR
	int next; // ITERATOR: the next service to give
} io[256];
static int nio;
static long live_io; // IOKit objects not released

static struct {
	int open, keys, keyinfo;
} conns[64];
static int nconns;
static long open_smc; // connections not closed

#define IOBASE 0x1000u
#define CONNBASE 0x2000u

static uint32_t ionew(enum iokind k, int keys) {
	if (nio == (int)(sizeof io / sizeof io[0]))
		die("too many IOKit objects");
	io[nio].kind = k;
	io[nio].refs = 1;
	io[nio].keys = keys;
	live_io++;
	return IOBASE + nio++;
}

static int iouse(uint32_t h, enum iokind k, const char *fn) {
	enter(fn);
	int i = (int)(h - IOBASE);
	if (h < IOBASE || i >= nio)
		die("%s: %#x is no IOKit object", fn, h);
	if (io[i].refs <= 0)
		die("%s: IOKit object %#x used after it was released", fn, h);
	if (io[i].kind != k)
		die("%s: IOKit object %#x of the wrong kind", fn, h);
	return i;
}

const void *IOServiceMatching(const char *name) {
	enter(__func__);
	if (name == NULL || strcmp(name, "AppleSMC") != 0)
		die("%s: %s, not AppleSMC", __func__, name ? name : "NULL");
	if (is_case("no-matching"))
		return NULL;
	obj *d = dict1("IOProviderClass", string(name));
	return d;
}

int32_t IOServiceGetMatchingServices(uint32_t mainPort, const void *matching, uint32_t *existing) {
	obj *m = use(matching, DICT, __func__);
	if (mainPort != 0)
		die("%s: main port %#x, not kIOMainPortDefault (0)", __func__, mainPort);
	if (existing == NULL)
		die("%s: no place for the iterator", __func__);
	release(m); // IOKit takes one reference of the matching dictionary, always
	*existing = ionew(ITERATOR, 0);
	return 0;
}

uint32_t IOIteratorNext(uint32_t it) {
	int i = iouse(it, ITERATOR, __func__);
	// AppleSMC, then its keys' endpoint, which the binding must prefer.
	if (is_case("no-smc") || io[i].next >= 2)
		return 0;
	return ionew(SERVICE, io[i].next++ == 1);
}

int32_t IORegistryEntryGetName(uint32_t entry, char name[128]) {
	int i = iouse(entry, SERVICE, __func__);
	if (name == NULL)
		die("%s: no buffer", __func__);
	strcpy(name, io[i].keys ? "AppleSMCKeysEndpoint" : "AppleSMC");
	return 0;
}

int32_t IOServiceOpen(uint32_t service, uint32_t task, uint32_t type, uint32_t *conn) {
	int i = iouse(service, SERVICE, __func__);
	if (task != TASK)
		die("%s: task port %#x, not mach_task_self's (%#x)", __func__, task, TASK);
	if (type != 0)
		die("%s: type %u, not 0", __func__, type);
	if (conn == NULL)
		die("%s: no place for the connection", __func__);
	if (is_case("smc-refuses"))
		return (int32_t)NOT_PERMITTED;
	if (nconns == (int)(sizeof conns / sizeof conns[0]))
		die("too many connections");
	conns[nconns].open = 1;
	conns[nconns].keys = io[i].keys;
	open_smc++;
	*conn = CONNBASE + nconns++;
	return 0;
}

static int connuse(uint32_t c, const char *fn) {
	enter(fn);
	int i = (int)(c - CONNBASE);
	if (c < CONNBASE || i >= nconns || !conns[i].open)
		die("%s: %#x is no open connection", fn, c);
	return i;
}

int32_t IOServiceClose(uint32_t c) {
	conns[connuse(c, __func__)].open = 0;
	open_smc--;
	return 0;
}

int32_t IOObjectRelease(uint32_t h) {
	enter(__func__);
	int i = (int)(h - IOBASE);
	if (h < IOBASE || i >= nio)
		die("%s: %#x is no IOKit object", __func__, h);
	if (io[i].refs <= 0)
		die("%s: IOKit object %#x released once too often", __func__, h);
	if (--io[i].refs == 0)
		live_io--;
	return 0;
}

uint32_t mach_task_self(void) { return TASK; }

// AppleSMC's SMCParamStruct, as its C definition lays it out.
typedef struct {
	uint8_t major, minor, build, reserved;
	uint16_t release;
} smc_vers;
typedef struct {
	uint16_t version, length;
	uint32_t cpu_plimit, gpu_plimit, mem_plimit;
} smc_plimit;
typedef struct {
	uint32_t data_size, data_type;
	uint8_t data_attributes;
} smc_keyinfo;
typedef struct {
	uint32_t key;
	smc_vers vers;
	smc_plimit plimit;
	smc_keyinfo keyinfo;
	uint8_t result, status, data8;
	uint32_t data32;
	uint8_t bytes[32];
} smc_param;
_Static_assert(sizeof(smc_param) == 80, "SMCParamStruct is 80 bytes");
_Static_assert(offsetof(smc_param, keyinfo) == 28, "keyInfo at 28");
_Static_assert(offsetof(smc_param, result) == 40, "result at 40");
_Static_assert(offsetof(smc_param, data8) == 42, "data8 at 42");
_Static_assert(offsetof(smc_param, bytes) == 48, "bytes at 48");

static long smc_calls;

int32_t IOConnectCallStructMethod(uint32_t c, uint32_t selector, const void *in, size_t inSize, void *out, size_t *outSize) {
	int i = connuse(c, __func__);
	if (selector != 2)
		die("%s: selector %u, not 2 (kSMCHandleYPCEvent)", __func__, selector);
	if (in == NULL || out == NULL || outSize == NULL)
		die("%s: NULL structure or size", __func__);
	if (inSize != sizeof(smc_param) || *outSize != sizeof(smc_param))
		die("%s: structures of %zu and %zu bytes, not 80", __func__, inSize, *outSize);
	smc_param p, r;
	memcpy(&p, in, sizeof p);
	memset(&r, 0, sizeof r);
	if (p.key != PSTR)
		die("%s: key %#x, not PSTR (0x50535452)", __func__, p.key);
	smc_calls++;
	switch (p.data8) {
	case 9: // key info
		if (!conns[i].keys) {
			r.result = KEY_MISSING;
			break;
		}
		r.keyinfo.data_size = 4;
		r.keyinfo.data_type = FLT;
		r.keyinfo.data_attributes = 0xd0;
		conns[i].keyinfo = 1;
		break;
	case 5: { // read bytes
		if (!conns[i].keyinfo)
			die("%s: PSTR read (command 5) before its key info (command 9)", __func__);
		if (p.keyinfo.data_size != 4 || p.keyinfo.data_type != FLT)
			die("%s: read of PSTR as %u bytes of type %#x, not the 4 of 'flt ' that key info gave", __func__, p.keyinfo.data_size, p.keyinfo.data_type);
		float w = is_case("pstr-zero") ? 0.0f : 42.5f;
		memcpy(r.bytes, &w, sizeof w); // little-endian, as on Apple Silicon
		break;
	}
	default:
		die("%s: command %u, neither 9 (key info) nor 5 (read bytes)", __func__, p.data8);
	}
	memcpy(out, &r, sizeof r);
	*outSize = sizeof r;
	return 0;
}

// ---- for the tests

long fake_live_cf(void) { return live_cf; }
long fake_live_io(void) { return live_io; }
long fake_open_smc(void) { return open_smc; }
long fake_smc_calls(void) { return smc_calls; }
int fake_loaded_on_main_thread(void) { return on_main; }

long fake_index_calls(int i) { return i >= 0 && i < NCHANS ? index_calls[i] : -1; }
long fake_value_calls(int i) { return i >= 0 && i < NCHANS ? value_calls[i] : -1; }
