// ASan's defaults for every binary that links the DDS transport.
//
// libfastrtps 2.9.1 (Debian) allocates an 88-byte object in
// StatisticsWriterImpl's constructor that ~RTPSWriter deletes as a 56-byte
// type whenever a DataWriter is deleted: ASan's new-delete-type-mismatch
// check reports it inside the library and aborts the process at the first
// transport shutdown. ASan has no suppression by frame for this check, so
// exactly this one check is turned off, and only in binaries that link the
// transport; every other ASan check stays on. ASAN_OPTIONS (the asan
// config's) is applied after these defaults and does not set it.
// Compiled only under ASan (the function is harmless otherwise, but a
// plain build has no reason to carry it).

#if defined(__SANITIZE_ADDRESS__)
#define CYBER_DDS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CYBER_DDS_ASAN 1
#endif
#endif

#ifdef CYBER_DDS_ASAN
extern "C" const char* __asan_default_options() {
  return "new_delete_type_mismatch=0";
}
#endif
