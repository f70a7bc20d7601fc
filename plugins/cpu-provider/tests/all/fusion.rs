//! fusion tests.
