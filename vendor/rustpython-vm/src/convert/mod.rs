mod into_object;
mod to_pyobject;
mod transmute_from;
mod try_from;

pub use into_object::IntoObject;
pub use to_pyobject::{IntoPyException, ToPyException, ToPyObject, ToPyResult};
pub use transmute_from::TransmuteFromObject;
pub use try_from::{TryFromBorrowedObject, TryFromObject};
