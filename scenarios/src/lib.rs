//! scenarios: named YAML scenario files and their loader. Not built yet: the work is tracked
//! as issue C1; see ARCHITECTURE.md.
