// IOPlatformExpertDevice's entry, for the binding's read of the Mac's
// serial number (internal/ioreport/platform_lib.go): included by fake.c,
// after battery.c. platform_binding_test.go knows the same serial.
//
// Macs' ways that it holds the binding to:
// - The entry is IOServiceGetMatchingService's (battery.c hands it
//   over), which the caller releases.
// - IORegistryEntryCreateCFProperty gives one property, a Create that
//   the caller owns and releases; NULL where the entry has none.
// - The serial is a CFString, told by CFGetTypeID: CFStringGetCString on
//   what is not one aborts.

#define FAKE_SERIAL "C02FAKE0SRL1"

static uint32_t platform_service(void) { return ionew((ioobj){.kind = ENTRY, .platform = 1}); }

unsigned long CFStringGetTypeID(void) { return enter(__func__), TYPEID_BASE + STRING; }

const void *IORegistryEntryCreateCFProperty(uint32_t entry, const void *key, const void *alloc, uint32_t options) {
	ioobj *e = iouse(entry, ENTRY, __func__);
	obj *k = use(key, STRING, __func__);
	if (!e->platform)
		die("%s: an entry other than IOPlatformExpertDevice", __func__);
	if (alloc != NULL || options != 0)
		die("%s: an allocator or options, not kCFAllocatorDefault and 0", __func__);
	if (strcmp(k->str, "IOPlatformSerialNumber") != 0 || is_case("platform-no-serial"))
		return NULL;
	if (is_case("platform-number"))
		return number(12345);
	return string(FAKE_SERIAL);
}
