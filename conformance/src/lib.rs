//! conformance: the property suite of the provider's promises, run against the fake or real
//! AWS. Not built yet: the work is tracked as issue C1; see ARCHITECTURE.md.
