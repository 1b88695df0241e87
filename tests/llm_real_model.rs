#[path = "support_llama.rs"]
mod support_llama;

#[tokio::test]
async fn boot() {
    let s = support_llama::LlamaServer::start().await;
    eprintln!("{}", s.base);
}
