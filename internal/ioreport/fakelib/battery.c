// AppleSmartBattery's entry, for the binding's reads of a MacBook's
// adapter and battery (internal/ioreport/battery_lib.go): included by
// fake.c, after fakemac.h. Its values are from public ioreg dumps of
// MacBooks (docs/wall.md); binding_test.go knows the same ones.
//
// Macs' ways that it holds the binding to:
// - The entry is one IOService, IOServiceGetMatchingService's, which
//   takes the matching dictionary's reference and gives the entry, which
//   the caller releases; 0 where there is none.
// - IORegistryEntryCreateCFProperties gives a dictionary the caller owns;
//   its values are the dictionary's (Get), never released on their own.
// - A value's type is told by CFGetTypeID: CFNumberGetValue on what is
//   not a CFNumber, or CFBooleanGetValue on what is not a CFBoolean,
//   aborts (Core Foundation would misread or crash). A number is read as
//   kCFNumberSInt64Type only: signed, so that BatteryPower's -4636 mW is
//   read as such, never as ioreg's 18446744073709546980.

#define SINT64 4 // kCFNumberSInt64Type
#define TYPEID_BASE 0x100u

static obj *number(int64_t v) {
	obj *o = make(NUMBER);
	o->value = v;
	return o;
}

static obj *floating(double f) {
	obj *o = make(NUMBER);
	o->f = f;
	o->is_float = 1;
	return o;
}

static obj *boolean(int truth) {
	obj *o = make(BOOLEAN);
	o->truth = truth;
	return o;
}

typedef struct {
	const char *key;
	obj *value; // NULL: the key is left out
} entry;

// dictof is a dictionary of the entries up to a NULL key, which takes
// over their values.
static obj *dictof(const entry *e) {
	long n = 0, k = 0;
	for (const entry *p = e; p->key != NULL; p++)
		n += p->value != NULL;
	obj *o = make(DICT);
	o->items = calloc(2 * n + 1, sizeof(obj *));
	o->n = n;
	for (const entry *p = e; p->key != NULL; p++) {
		if (p->value == NULL)
			continue;
		o->items[k] = string(p->key);
		o->items[n + k++] = p->value;
	}
	return o;
}

// telemetry is PowerTelemetryData: SystemPowerIn, AdapterEfficiencyLoss,
// SystemLoad and BatteryPower in mW, and the keys the binding does not
// read, the garbage accumulator of a real dump among them.
static obj *telemetry(int64_t in, int64_t loss, int64_t load, int64_t battery, int64_t volts, int64_t amps) {
	return dictof((entry[]){
	    {"SystemPowerIn", number(in)},
	    {"AdapterEfficiencyLoss", number(loss)},
	    {"SystemLoad", number(load)},
	    {"BatteryPower", number(battery)},
	    {"SystemVoltageIn", number(volts)},
	    {"SystemCurrentIn", number(amps)},
	    {"PowerTelemetryErrorCount", number(0)},
	    {"SystemPowerInAccumulatorCount", number(153016)},
	    {"SystemLoadAccumulatorCount", number(160021)},
	    {"AccumulatedSystemPowerIn", number(5461302275044)},
	    {"WallEnergyEstimate", number(3853)},
	    {NULL, NULL},
	});
}

// properties is the entry's dictionary, as the case says.
static obj *properties(void) {
	int installed = !is_case("battery-desktop"), ac = !is_case("battery-discharging");
	obj *t = NULL, *volts = number(12336), *amps = number(0), *external = boolean(ac);
	if (is_case("battery-ac"))
		t = telemetry(13177, 193, 13177, 0, 20010, 658);
	else if (is_case("battery-charging")) {
		t = telemetry(42825, 1181, 19852, 22973, 19930, 2149);
		release(volts), release(amps);
		volts = number(11928), amps = number(1926);
	} else if (is_case("battery-discharging")) {
		t = telemetry(0, 0, 4636, -4636, 0, 0);
		release(amps);
		amps = number(-386);
	} else if (is_case("battery-odd")) {
		t = dictof((entry[]){{"SystemPowerIn", floating(13177.5)}, {"AdapterEfficiencyLoss", string("193")}, {"SystemLoad", number(13177)}, {NULL, NULL}});
		release(external);
		external = number(1);
	} else if (is_case("battery-desktop")) {
		release(volts), release(amps);
		volts = amps = NULL;
	}
	return dictof((entry[]){
	    {"BatteryInstalled", boolean(installed)},
	    {"ExternalConnected", external},
	    {"IsCharging", boolean(is_case("battery-charging"))},
	    {"UpdateTime", number(1785304833)},
	    {"Voltage", volts},
	    {"InstantAmperage", amps},
	    {"PowerTelemetryData", t},
	    {NULL, NULL},
	});
}

// ---- Core Foundation's types and values

unsigned long CFGetTypeID(const void *cf) { return TYPEID_BASE + use(cf, ANY, __func__)->kind; }
unsigned long CFNumberGetTypeID(void) { return enter(__func__), TYPEID_BASE + NUMBER; }
unsigned long CFBooleanGetTypeID(void) { return enter(__func__), TYPEID_BASE + BOOLEAN; }
unsigned long CFDictionaryGetTypeID(void) { return enter(__func__), TYPEID_BASE + DICT; }

unsigned char CFNumberIsFloatType(const void *n) { return use(n, NUMBER, __func__)->is_float; }

unsigned char CFNumberGetValue(const void *n, long type, void *v) {
	obj *o = use(n, NUMBER, __func__);
	if (type != SINT64)
		die("%s: type %ld, not kCFNumberSInt64Type (4): a signed value read another way is misread", __func__, type);
	if (v == NULL)
		die("%s: no place for the value", __func__);
	int64_t x = o->is_float ? (int64_t)o->f : o->value;
	memcpy(v, &x, sizeof x);
	return !o->is_float || (double)x == o->f; // false where lossy, as Core Foundation's
}

unsigned char CFBooleanGetValue(const void *b) { return use(b, BOOLEAN, __func__)->truth; }

// ---- IOKit

static uint32_t platform_service(void); // platform.c

static long battery_reads; // IORegistryEntryCreateCFProperties's dictionaries made

uint32_t IOServiceGetMatchingService(uint32_t mainPort, const void *matching) {
	obj *m = use(matching, DICT, __func__);
	if (mainPort != 0)
		die("%s: main port %#x, not kIOMainPortDefault (0)", __func__, mainPort);
	if (m->n == 1 && strcmp(m->items[1]->str, FAKEIO_THIRD_CLASS) == 0) {
		release(m); // IOKit takes one reference of the matching dictionary, always
		return platform_service();
	}
	if (m->n != 1 || strcmp(m->items[1]->str, FAKEIO_OTHER_CLASS) != 0)
		die("%s: a service of %s, not " FAKEIO_OTHER_CLASS " nor " FAKEIO_THIRD_CLASS, __func__, m->items[1]->str);
	release(m); // IOKit takes one reference of the matching dictionary, always
	if (is_case("battery-none"))
		return 0;
	return ionew((ioobj){.kind = ENTRY, .battery = 1});
}

int32_t IORegistryEntryCreateCFProperties(uint32_t entry, const void **props, const void *alloc, uint32_t options) {
	ioobj *e = iouse(entry, ENTRY, __func__);
	if (!e->battery)
		die("%s: an entry other than AppleSmartBattery", __func__);
	if (props == NULL)
		die("%s: no place for the properties", __func__);
	if (alloc != NULL || options != 0)
		die("%s: an allocator or options, not kCFAllocatorDefault and 0", __func__);
	if (is_case("battery-no-properties"))
		return (int32_t)0xe00002bcu; // kIOReturnError
	battery_reads++;
	*props = properties();
	return 0;
}

long fake_battery_reads(void) { return battery_reads; }
