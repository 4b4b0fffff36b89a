//! The rules core: game record, outcomes and PGN, on shakmaty.
