use proc_macro::TokenStream;
#[proc_macro_attribute]
pub fn a2a_agent(_a: TokenStream, i: TokenStream) -> TokenStream { i }
#[proc_macro_attribute]
pub fn skill(_a: TokenStream, i: TokenStream) -> TokenStream { i }
#[proc_macro_attribute]
pub fn streaming(_a: TokenStream, i: TokenStream) -> TokenStream { i }
