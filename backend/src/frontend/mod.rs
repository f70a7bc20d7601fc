//! The application-facing graph API (the role of hipDNN's frontend).
