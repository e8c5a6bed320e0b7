mod common;
mod http;
mod stdio;
