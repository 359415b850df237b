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
// What it shares with the process-energy binding's fake (the abort, the
// main thread's check, Core Foundation's objects and calls, IOKit's
// objects) is in internal/fakemac/fakemac.h. Built by the test
// (fakemac.Build, from binding_test.go):
// gcc -shared -fPIC -I internal/fakemac -o libfake.so internal/ioreport/fakelib/fake.c

#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TASK 0x203u            // the port mach_task_self gives
#define PSTR 0x50535452u       // 'PSTR'
#define PDTR 0x50445452u       // 'PDTR'
#define PPBR 0x50504252u       // 'PPBR'
#define FLT 0x666c7420u        // 'flt '
#define NOT_PERMITTED 0xe00002e2u // kIOReturnNotPermitted
#define KEY_MISSING 132        // the SMC's result for a key it has not

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

// How often each channel of a sample was taken from its array, and its
// value read: the tests hold a stream to reading only its plan's.
static long index_calls[NCHANS], value_calls[NCHANS];

// ---- what is its own among fakemac.h's objects

#define FAKE_NAME "fake IOReport"
#define FAKECF_KINDS CHANNEL, SUBSCRIPTION, NUMBER, BOOLEAN
#define FAKECF_KIND_NAMES "an IOReport channel", "an IOReport subscription", "a CFNumber", "a CFBoolean"
// mutable: a DICT that is a mutable copy, as IOReport's subscription needs
// its channels; samples: an ARRAY of a sample's channels, whose reads are
// counted; index and value: a CHANNEL's. A NUMBER is value, or f where
// is_float; a BOOLEAN is truth.
#define FAKECF_FIELDS          \
	int mutable, samples;      \
	int index;                 \
	int64_t value;             \
	double f;                  \
	int is_float, truth;
#define FAKECF_ARRAY_READ(a, i)       \
	do {                          \
		if ((a)->samples)     \
			index_calls[i]++; \
	} while (0)
// keys: an ENTRY that is AppleSMCKeysEndpoint, which has PSTR; battery:
// an ENTRY that is AppleSmartBattery; platform: one that is
// IOPlatformExpertDevice (platform.c).
#define FAKEIO_FIELDS int keys, battery, platform;
#define FAKEIO_OBJECTS 256
#define FAKEIO_CLASS "AppleSMC"
#define FAKEIO_OTHER_CLASS "AppleSmartBattery"
#define FAKEIO_THIRD_CLASS "IOPlatformExpertDevice"
#include "fakemac.h"

// A CHANNEL holds its group, subgroup, name and unit, in items in this
// order; a SUBSCRIPTION holds the channels it was made for.
enum { GROUP, SUBGROUP, NAME, UNIT };

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
	// AppleSmartBattery's entry, and the SMC's PDTR and PPBR (battery.c):
	"battery-ac",          // on AC, not charging; PDTR and PPBR
	"battery-charging",    // on AC, charging; no PDTR nor PPBR
	"battery-discharging", // on battery: BatteryPower below 0; PDTR and PPBR
	"battery-no-telemetry", // a MacBook without PowerTelemetryData; PDTR and PPBR
	"battery-desktop",     // a desktop's stub: BatteryInstalled false
	"battery-none",        // no AppleSmartBattery entry at all
	"battery-odd",         // values of other types than the keys' own
	"battery-no-properties", // IORegistryEntryCreateCFProperties fails
	// IOPlatformExpertDevice's serial number (platform.c):
	"platform-no-serial", // the entry has no IOPlatformSerialNumber
	"platform-number",    // its IOPlatformSerialNumber is a CFNumber
};
static char the_case[64] = "mac";
static int later;    // the case applies from the second sample on
static long samples; // samples made so far

// is_case says whether the case is c, and applies now.
static int is_case(const char *c) { return strcmp(the_case, c) == 0 && (!later || samples > 0); }

__attribute__((constructor)) static void loaded(void) {
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

// channels are the group's channels as IOReport gives them, each with its
// counter at sample k, or the value of none (-1).
static obj *channels(long k) {
	int n = is_case("fewer") ? NCHANS - 1 : NCHANS;
	obj *a = array(n);
	a->samples = k >= 0;
	for (int i = 0; i < n; i++) {
		if (k >= 0 && is_case("null-channel") && i == NULL_CHANNEL)
			continue;
		obj *c = holding(CHANNEL, 4);
		c->items[GROUP] = string("Energy Model");
		c->items[SUBGROUP] = chans[i].subgroup ? string(chans[i].subgroup) : NULL;
		c->items[NAME] = string(chans[i].name);
		c->items[UNIT] = string(chans[i].unit);
		c->index = i;
		c->value = k < 0 ? 0 : chans[i].base + chans[i].step * k;
		if (k >= 0 && is_case("no-simple") && i == NOT_SIMPLE)
			c->value = INT64_MIN;
		a->items[i] = c;
	}
	return a;
}

// ---- Core Foundation, beside fakemac.h's

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
	return dict("IOReportChannels", channels(-1), NULL, NULL);
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
	obj *s = holding(SUBSCRIPTION, 1);
	s->items[0] = retain(d);
	*subscribed = dict("IOReportChannels", channels(-1), NULL, NULL);
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
	obj *d = dict(is_case("no-key") ? "IOReportOtherKey" : "IOReportChannels", a, NULL, NULL);
	samples++;
	return d;
}

const void *IOReportChannelGetGroup(const void *ch) { return use(ch, CHANNEL, __func__)->items[GROUP]; }
const void *IOReportChannelGetSubGroup(const void *ch) { return use(ch, CHANNEL, __func__)->items[SUBGROUP]; }
const void *IOReportChannelGetChannelName(const void *ch) { return use(ch, CHANNEL, __func__)->items[NAME]; }
const void *IOReportChannelGetUnitLabel(const void *ch) { return use(ch, CHANNEL, __func__)->items[UNIT]; }

int64_t IOReportSimpleGetIntegerValue(const void *ch, int32_t *unused) {
	(void)unused;
	obj *c = use(ch, CHANNEL, __func__);
	value_calls[c->index]++;
	return c->value;
}

// ---- IOKit, beside fakemac.h's, and the SMC

// keyinfo is a bit for each key whose info a connection asked for.
static struct {
	int open, keys, keyinfo;
} conns[64];
static int nconns;
static long open_smc; // connections not closed

#define CONNBASE 0x2000u

uint32_t IOIteratorNext(uint32_t it) {
	ioobj *o = iouse(it, ITERATOR, __func__);
	// AppleSMC, then its keys' endpoint, which the binding must prefer.
	if (is_case("no-smc") || o->next >= 2)
		return 0;
	return ionew((ioobj){.kind = ENTRY, .keys = o->next++ == 1});
}

int32_t IORegistryEntryGetName(uint32_t entry, char name[128]) {
	ioobj *e = iouse(entry, ENTRY, __func__);
	if (name == NULL)
		die("%s: no buffer", __func__);
	strcpy(name, e->keys ? "AppleSMCKeysEndpoint" : "AppleSMC");
	return 0;
}

int32_t IOServiceOpen(uint32_t service, uint32_t task, uint32_t type, uint32_t *conn) {
	ioobj *s = iouse(service, ENTRY, __func__);
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
	conns[nconns].keys = s->keys;
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

// smc_key is key's bit, and its value in w, where this Mac's SMC has it:
// PSTR always, PDTR and PPBR where the case says; 0 where it has not.
static int smc_key(uint32_t key, float *w) {
	int power_keys = is_case("battery-ac") || is_case("battery-discharging") || is_case("battery-no-telemetry");
	switch (key) {
	case PSTR:
		*w = is_case("pstr-zero") ? 0.0f : 42.5f;
		return 1;
	case PDTR:
		*w = is_case("battery-ac") ? 13.5f : is_case("battery-no-telemetry") ? 35.25f : 0.0f;
		return power_keys ? 2 : 0;
	case PPBR:
		*w = is_case("battery-discharging") ? 4.625f : is_case("battery-no-telemetry") ? -1.5f : 0.0f;
		return power_keys ? 4 : 0;
	}
	die("IOConnectCallStructMethod: key %#x, none of PSTR, PDTR and PPBR", key);
}

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
	float w;
	int bit = smc_key(p.key, &w);
	smc_calls++;
	switch (p.data8) {
	case 9: // key info
		if (!conns[i].keys || bit == 0) {
			r.result = KEY_MISSING;
			break;
		}
		r.keyinfo.data_size = 4;
		r.keyinfo.data_type = FLT;
		r.keyinfo.data_attributes = 0xd0;
		conns[i].keyinfo |= bit;
		break;
	case 5: { // read bytes
		if (!(conns[i].keyinfo & bit))
			die("%s: key %#x read (command 5) before its key info (command 9)", __func__, p.key);
		if (p.keyinfo.data_size != 4 || p.keyinfo.data_type != FLT)
			die("%s: read of %#x as %u bytes of type %#x, not the 4 of 'flt ' that key info gave", __func__, p.key, p.keyinfo.data_size, p.keyinfo.data_type);
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

#include "battery.c"
#include "platform.c"

// ---- for the tests

long fake_open_smc(void) { return open_smc; }
long fake_smc_calls(void) { return smc_calls; }

long fake_index_calls(int i) { return i >= 0 && i < NCHANS ? index_calls[i] : -1; }
long fake_value_calls(int i) { return i >= 0 && i < NCHANS ? value_calls[i] : -1; }
