// What exopower's fakes of macOS's libraries have in common. Each fake is
// one C file that a binding's test builds with gcc into a shared library
// standing in for macOS's (internal/ioreport/fakelib/fake.c for the
// IOReport binding, internal/attrib/fakelib/fake.c for the process-energy
// binding, each built with -I internal/fakemac), and each holds its
// binding to what macOS expects of a caller in the same ways:
//
// - A mistake aborts, naming it (die), where a Mac would crash or quietly
//   misbehave.
// - Every call into Core Foundation or IOKit checks that the library was
//   loaded on the process's main thread (enter), where Core Foundation
//   must be initialised.
// - Core Foundation's objects are reference counted: Create and Copy
//   return a reference the caller owns, Get does not; an object's last
//   release releases what it holds. A release too many, a call on a freed
//   object, a NULL where Core Foundation would crash, or an object of the
//   wrong type aborts. Strings are UTF-8 (kCFStringEncodingUTF8).
// - IOKit's objects, iterators and registry entries, are counted from
//   their making to their release, and one used after its release, or
//   released once too often, aborts.
//
// It defines, not only declares, the calls of Core Foundation and IOKit
// that both bindings make: a fake includes it once, from its one file.
// Before it does, the fake defines _GNU_SOURCE, and what is its own:
//
//   FAKE_NAME          how its abort messages begin ("fake IOReport")
//   FAKECF_KINDS       its own kinds of Core Foundation object, after ANY,
//                      STRING, ARRAY and DICT (CHANNEL, SUBSCRIPTION)
//   FAKECF_KIND_NAMES  what its messages call them ("an IOReport channel")
//   FAKECF_FIELDS      the fields its own kinds keep; the objects one
//                      holds go in items, where release finds them
//   FAKECF_ARRAY_READ(a, i)  optional: runs at each CFArrayGetValueAtIndex
//                      of item i of array a, for a fake that counts them
//   FAKEIO_FIELDS      the fields its IOKit objects keep
//   FAKEIO_OBJECTS     how many IOKit objects it makes at the most
//   FAKEIO_CLASS       the IOService class whose services its binding
//                      iterates (IOServiceGetMatchingServices)
//   FAKEIO_OTHER_CLASS optional: one more class IOServiceMatching takes,
//                      for the fake's own IOServiceGetMatchingService
//   FAKEIO_THIRD_CLASS optional: and one more, for the same
//
// After it, the fake defines is_case, which this header declares: it says
// whether the Mac the fake is (its case) is the one named, and in the
// case "no-matching" IOServiceMatching gives NULL.

#ifndef FAKEMAC_H
#define FAKEMAC_H

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before any include: syscall and strdup need it under -std=c11"
#endif

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UTF8 0x08000100u // kCFStringEncodingUTF8

// The helpers below but die are static inline, so that a fake which does
// without one of them is not warned of it (-Werror).

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	fputs(FAKE_NAME ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

static int is_case(const char *c);

// ---- the main thread

static int on_main; // loaded on the process's main thread

__attribute__((constructor)) static void loaded_on(void) { on_main = syscall(SYS_gettid) == getpid(); }

// enter is the start of every call into Core Foundation or IOKit: Core
// Foundation must have been initialised, that is loaded, on the main
// thread.
static inline void enter(const char *fn) {
	if (!on_main)
		die("%s: the library was loaded off the main thread; Core Foundation must be initialised on the main thread", fn);
}

// ---- Core Foundation's objects

enum kind { ANY, STRING, ARRAY, DICT, FAKECF_KINDS };
static const char *kinds[] = {"an object", "a CFString", "a CFArray", "a CFDictionary", FAKECF_KIND_NAMES};
#define MAGIC 0x43464f42u

typedef struct obj obj;
struct obj {
	uint32_t magic;
	enum kind kind;
	long refs;   // 0: freed, kept so that a later use is told
	char *str;   // STRING
	obj **items; // ARRAY: n items; DICT: n keys, then n values; the fake's own kinds: n they hold
	long n;
	FAKECF_FIELDS
};

static long live_cf; // objects alive

static inline obj *make(enum kind k) {
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
static inline obj *use(const void *p, enum kind k, const char *fn) {
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

static inline obj *retain(obj *o) {
	if (o != NULL)
		o->refs++;
	return o;
}

// release drops a reference. A freed object's memory is kept, with refs
// 0, so that a later use is told rather than read whatever took its
// place.
static inline void release(obj *o) {
	if (o == NULL || --o->refs > 0)
		return;
	live_cf--;
	long n = o->kind == DICT ? 2 * o->n : o->n;
	for (long i = 0; i < n; i++)
		release(o->items[i]);
}

static inline obj *string(const char *s) {
	obj *o = make(STRING);
	o->str = strdup(s);
	return o;
}

// holding is an object of kind k that holds n objects, NULL until set.
static inline obj *holding(enum kind k, long n) {
	obj *o = make(k);
	o->items = calloc(n + 1, sizeof(obj *));
	o->n = n;
	return o;
}

static inline obj *array(long n) { return holding(ARRAY, n); }

// dict is a dictionary of up to two keys, which takes over the values; a
// NULL k2 ends it at one.
static inline obj *dict(const char *k1, obj *v1, const char *k2, obj *v2) {
	obj *o = make(DICT);
	o->items = calloc(4, sizeof(obj *));
	o->n = k2 == NULL ? 1 : 2;
	o->items[0] = string(k1);
	o->items[o->n] = v1;
	if (k2 != NULL) {
		o->items[1] = string(k2);
		o->items[3] = v2;
	}
	return o;
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

long CFArrayGetCount(const void *a) { return use(a, ARRAY, __func__)->n; }

const void *CFArrayGetValueAtIndex(const void *a, long i) {
	obj *o = use(a, ARRAY, __func__);
	if (i < 0 || i >= o->n)
		die("%s: index %ld of an array of %ld (Core Foundation would crash)", __func__, i, o->n);
#ifdef FAKECF_ARRAY_READ
	FAKECF_ARRAY_READ(o, i);
#endif
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

void CFRelease(const void *cf) {
	if (cf == NULL)
		die("CFRelease(NULL) (Core Foundation crashes)");
	release(use(cf, ANY, __func__));
}

// ---- IOKit's objects

// An iterator gives its next from next on; what it iterates over, and
// what an entry is, are the fake's own fields.
enum iokind { ITERATOR = 1, ENTRY };
typedef struct {
	enum iokind kind;
	long refs;
	int next; // ITERATOR: the next to give
	FAKEIO_FIELDS
} ioobj;
static ioobj io[FAKEIO_OBJECTS];
static int nio;
static long live_io; // IOKit objects not released
#define IOBASE 0x1000u

static inline uint32_t ionew(ioobj o) {
	if (nio == FAKEIO_OBJECTS)
		die("more than %d IOKit objects made", FAKEIO_OBJECTS);
	o.refs = 1;
	io[nio] = o;
	live_io++;
	return IOBASE + nio++;
}

// iofind is the IOKit object of handle h, live or released, as fn needs
// it.
static inline ioobj *iofind(uint32_t h, const char *fn) {
	enter(fn);
	int i = (int)(h - IOBASE);
	if (h < IOBASE || i >= nio)
		die("%s: %#x is no IOKit object", fn, h);
	return &io[i];
}

// iouse checks that h is a live IOKit object of kind k (0: of any), as fn
// needs it.
static inline ioobj *iouse(uint32_t h, enum iokind k, const char *fn) {
	ioobj *o = iofind(h, fn);
	if (o->refs <= 0)
		die("%s: IOKit object %#x used after it was released", fn, h);
	if (k != 0 && o->kind != k)
		die("%s: IOKit object %#x of the wrong kind", fn, h);
	return o;
}

// ---- IOKit

const void *IOServiceMatching(const char *name) {
	enter(__func__);
	int known = name != NULL && strcmp(name, FAKEIO_CLASS) == 0;
#ifdef FAKEIO_OTHER_CLASS
	known = known || (name != NULL && strcmp(name, FAKEIO_OTHER_CLASS) == 0);
#endif
#ifdef FAKEIO_THIRD_CLASS
	known = known || (name != NULL && strcmp(name, FAKEIO_THIRD_CLASS) == 0);
#endif
	if (!known)
		die("%s: %s, not " FAKEIO_CLASS, __func__, name ? name : "NULL");
	if (is_case("no-matching"))
		return NULL;
	return dict("IOProviderClass", string(name), NULL, NULL);
}

// IOServiceGetMatchingServices gives an iterator whose fields, but for
// its kind, are all zero: the fake's IOIteratorNext knows it by that.
int32_t IOServiceGetMatchingServices(uint32_t mainPort, const void *matching, uint32_t *existing) {
	obj *m = use(matching, DICT, __func__);
	if (mainPort != 0)
		die("%s: main port %#x, not kIOMainPortDefault (0)", __func__, mainPort);
	if (existing == NULL)
		die("%s: no place for the iterator", __func__);
	if (m->n != 1 || strcmp(m->items[1]->str, FAKEIO_CLASS) != 0)
		die("%s: services of %s, not " FAKEIO_CLASS, __func__, m->items[1]->str);
	release(m); // IOKit takes one reference of the matching dictionary, always
	*existing = ionew((ioobj){.kind = ITERATOR});
	return 0;
}

int32_t IOObjectRelease(uint32_t h) {
	ioobj *o = iofind(h, __func__);
	if (o->refs <= 0)
		die("%s: IOKit object %#x released once too often", __func__, h);
	if (--o->refs == 0)
		live_io--;
	return 0;
}

// ---- for the tests, never for the binding

long fake_live_cf(void) { return live_cf; }
long fake_live_io(void) { return live_io; }
int fake_loaded_on_main_thread(void) { return on_main; }

#endif
