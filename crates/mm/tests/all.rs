//! Integration tests of the real `mm` binary against the scripted model server (and, with
//! `MM_E2E=1`, against a real llama.cpp server).
mod suite;
