#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| a2a_fuzz::v03(data));
